// SPDX-License-Identifier: MIT
#pragma once
// What a parser holds outside the source's arena while it builds a tree, counted against the tree cap
// (limits::max_tree_bytes, source::charge): `node_stack`, a growable list of trivially copyable nodes,
// and `charged_allocator`, for the standard containers. Private.

#include <nflens/source.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace nflens::detail {

/// A stack of a parser (the nft parser's expressions, statements, rules, elements and marks; the JSON
/// reader's document nodes): a vector of trivially
/// copyable nodes whose push is a few inlined instructions (growing is out of line) and whose large
/// storage (from `mapped_bytes`) is a mapping of its own, so that a list of millions (a 100 MB line of
/// rules, a million set elements) is resident once, not two or three times: it grows with mremap (no
/// copy, the old and the new storage never both resident), and `keep` gives its pages back while it
/// copies them into the arena. With std::vector the peak of such a list was its doubled capacity plus
/// the arena's copy: a million set elements (17.5 MB of text) added 145.6 MB at the peak, now 85.7 MB.
/// A list under construction is part of the tree: with `charge_to`, a mapped storage is charged to the
/// source's tree cap (`source::charge`, `limits::max_tree_bytes`), so that the stacks and the arena
/// together stay within it. It grows at most to the room left, one that cannot take the next node throws
/// `arena_exhausted` as the arena does, and `keep` shrinks it to the nodes it still holds (the kept ones
/// are counted in the arena from then on). Without this, a 100 MB line of rules capped at 200 MB of tree
/// held another 70 MB of rules on its stack when the arena reached the cap. A storage under
/// `mapped_bytes` is not counted: the cap is exact to 256 kB per stack.
template <class T>
class node_stack {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  using value_type = T;
  static constexpr std::size_t mapped_bytes = std::size_t{256} << 10;

  node_stack() = default;
  node_stack(const node_stack&) = delete;
  node_stack& operator=(const node_stack&) = delete;
  ~node_stack() {
    free_storage();
    if (budget_ != nullptr) budget_->release(charged_);
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] T* data() noexcept { return data_; }
  [[nodiscard]] const T* data() const noexcept { return data_; }
  [[nodiscard]] T& back() noexcept { return data_[size_ - 1]; }
  [[nodiscard]] const T& back() const noexcept { return data_[size_ - 1]; }
  [[nodiscard]] T& operator[](std::size_t i) noexcept { return data_[i]; }
  [[nodiscard]] const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  [[nodiscard]] T* begin() noexcept { return data_; }
  [[nodiscard]] T* end() noexcept { return data_ + size_; }
  void push_back(const T& v) {
    if (size_ == capacity_) [[unlikely]]
      grow(size_ + 1);
    std::construct_at(data_ + size_, v);
    ++size_;
  }
  void pop_back() noexcept { --size_; }
  /// Drops the nodes from `n` on (`n` <= size()).
  void resize(std::size_t n) noexcept { size_ = n; }
  void reserve(std::size_t n) {
    if (n > capacity_) grow(n);
  }
  /// Gives back a mapped storage's pages past the nodes held (see `shrink`).
  void shrink_to_fit() noexcept {
    if (mapped_) shrink();
  }
  /// Charges this stack's mapped storage to `src`'s tree cap from now on (set before the first node).
  void charge_to(source& src) noexcept { budget_ = &src; }
  void append(std::span<const T> items) {
    if (items.empty()) return;
    reserve(size_ + items.size());
    std::uninitialized_copy(items.begin(), items.end(), data_ + size_);
    size_ += items.size();
  }
  /// Copies the nodes from `from` on into `src`'s arena and drops them; the pages of a mapped storage
  /// that held only them go back to the system as they are copied, so that the list and its copy are
  /// never both resident.
  std::span<const T> keep(source& src, std::size_t from) {
    const std::size_t n = size_ - from;
    if (n == 0) return {};
    if (mapped_) charge(from * sizeof(T));  // the nodes past `from` are the arena's from here on
    T* out = static_cast<T*>(src.allocate(sizeof(T) * n, alignof(T)));
    constexpr std::size_t step = (std::size_t{1} << 20) / sizeof(T);  // about 1 MiB at a time
    for (std::size_t done = 0; done < n;) {
      const std::size_t k = std::min(step, n - done);
      std::uninitialized_copy_n(data_ + from + done, k, out + done);
      done += k;
      if (mapped_) release(from, from + done);
    }
    size_ = from;
    if (mapped_) shrink();
    return {out, n};
  }
  /// Appends the nodes to `out` and empties the stack, giving back its pages as they are copied (the
  /// list and its copy are not both resident) and with them its charge: the parse is over.
  void move_into(std::vector<T>& out) {
    out.reserve(out.size() + size_);
    constexpr std::size_t step = (std::size_t{1} << 20) / sizeof(T);  // about 1 MiB at a time
    for (std::size_t done = 0; done < size_;) {
      const std::size_t k = std::min(step, size_ - done);
      out.insert(out.end(), data_ + done, data_ + done + k);
      done += k;
      if (mapped_) release(0, done);
    }
    size_ = 0;
    shrink();
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  bool mapped_ = false;
  source* budget_ = nullptr;
  std::size_t charged_ = 0;  ///< bytes charged to `budget_` for this stack

  static constexpr std::size_t page = 4096;
  /// Gives back the whole pages of the nodes `[first, last)` (their contents are dropped: only nodes
  /// that were copied away).
  void release(std::size_t first, std::size_t last) noexcept {
    const auto base = reinterpret_cast<std::uintptr_t>(data_);
    const std::uintptr_t begin = (base + first * sizeof(T) + page - 1) & ~(page - 1);
    const std::uintptr_t end = (base + last * sizeof(T)) & ~(page - 1);
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
  }
  static constexpr std::size_t page_up(std::size_t bytes) noexcept { return (bytes + page - 1) & ~(page - 1); }
  /// Sets what this stack has charged to `bytes` (more only from `grow`, within the room it checked).
  void charge(std::size_t bytes) {
    if (budget_ == nullptr) return;
    if (bytes > charged_)
      budget_->charge(bytes - charged_);
    else
      budget_->release(charged_ - bytes);
    charged_ = bytes;
  }
  [[gnu::noinline]] void grow(std::size_t need) {  // out of line: push_back stays small where it is inlined
    const std::size_t cap = std::max<std::size_t>({need, capacity_ * 2, 64});
    if (!mapped_ && cap * sizeof(T) < mapped_bytes) {
      void* p = std::realloc(static_cast<void*>(data_), cap * sizeof(T));
      if (p == nullptr) throw std::bad_alloc();
      data_ = static_cast<T*>(p);
      capacity_ = cap;
      return;
    }
    std::size_t nodes = page_up(cap * sizeof(T)) / sizeof(T);  // the whole of the last page
    if (budget_ != nullptr) {  // at most the room left, and at least the nodes needed
      const std::size_t most = (charged_ + budget_->tree_room()) / sizeof(T);
      if (need > most) throw arena_exhausted();
      nodes = std::min(nodes, most);
    }
    remap(nodes);
    charge(capacity_ * sizeof(T));
  }
  /// Gives back the pages past the nodes held when they are `mapped_bytes` or more (a small list kept
  /// on top of a large one, such as the rules of `jump { ... }` in a long chain, must not unmap and
  /// remap for each); all of the mapping when no node is held.
  void shrink() noexcept {
    const std::size_t bytes = page_up(size_ * sizeof(T));
    const std::size_t have = page_up(capacity_ * sizeof(T));
    if (bytes == 0) {
      free_storage();
      capacity_ = 0;
      mapped_ = false;
    } else if (have - bytes >= mapped_bytes) {
      ::munmap(reinterpret_cast<char*>(data_) + bytes, have - bytes);
      capacity_ = bytes / sizeof(T);
    }
    charge(capacity_ * sizeof(T));
  }
  /// Maps room for `cap` nodes (whole pages), keeping the nodes held.
  void remap(std::size_t cap) {
    const std::size_t bytes = page_up(cap * sizeof(T));
    void* p = MAP_FAILED;
#ifdef MREMAP_MAYMOVE
    if (mapped_) p = ::mremap(data_, page_up(capacity_ * sizeof(T)), bytes, MREMAP_MAYMOVE);
#endif
    if (p == MAP_FAILED) {
      p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      if (size_ != 0) std::memcpy(p, static_cast<const void*>(data_), size_ * sizeof(T));
      free_storage();
    }
    data_ = static_cast<T*>(p);
    capacity_ = cap;
    mapped_ = true;
  }
  void free_storage() noexcept {
    if (mapped_)
      ::munmap(data_, page_up(capacity_ * sizeof(T)));
    else
      std::free(data_);
    data_ = nullptr;
  }
};

/// A standard allocator whose allocations count against `src`'s tree cap while they live: containers a
/// parser keeps on the side (an index of names, the items of a document, a table block's chains) are
/// part of what the cap bounds. An allocation past the cap throws `arena_exhausted`, as the arena does.
template <class T>
struct charged_allocator {
  using value_type = T;
  source* src;
  explicit charged_allocator(source& s) noexcept : src(&s) {}
  template <class U>
  charged_allocator(const charged_allocator<U>& other) noexcept : src(other.src) {}  // NOLINT: rebinding
  [[nodiscard]] T* allocate(std::size_t n) {
    if (n > std::size_t(-1) / 2 / sizeof(T)) throw std::bad_array_new_length();
    src->charge(n * sizeof(T));
    try {
      return std::allocator<T>{}.allocate(n);
    } catch (...) {
      src->release(n * sizeof(T));
      throw;
    }
  }
  void deallocate(T* p, std::size_t n) noexcept {
    std::allocator<T>{}.deallocate(p, n);
    src->release(n * sizeof(T));
  }
  template <class U>
  friend bool operator==(const charged_allocator& a, const charged_allocator<U>& b) noexcept {
    return a.src == b.src;
  }
};

/// A vector counted against the tree cap.
template <class T>
using charged_vector = std::vector<T, charged_allocator<T>>;
/// A hash map counted against the tree cap.
template <class K, class V>
using charged_map = std::unordered_map<K, V, std::hash<K>, std::equal_to<K>, charged_allocator<std::pair<const K, V>>>;

}  // namespace nflens::detail
