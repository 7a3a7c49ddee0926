// SPDX-License-Identifier: MIT
#include <nflens/source.hpp>

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>

namespace nflens {

namespace {

// Upstream of the arenas: blocks of 2 MiB and more come from mmap with transparent huge pages
// requested (madvise), so that filling a large arena takes one page fault per 2 MiB instead of per
// 4 KiB (a tenth of the time of parsing a 40 MB dump went to page faults); smaller blocks from new.
class large_block_resource final : public std::pmr::memory_resource {
  static constexpr std::size_t huge = std::size_t{2} << 20;
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    if (bytes < huge || alignment > huge) return std::pmr::new_delete_resource()->allocate(bytes, alignment);
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    // A hint (without THP the pages are ordinary ones), given up to the last huge page boundary before
    // the block's last page: the monotonic resource writes its chunk header into that page when it
    // takes the block, and as a huge page it would make 2 MiB resident that the parse may never fill.
    const auto begin = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t end = (begin + bytes - 4096) & ~(std::uintptr_t{huge} - 1);
    if (end > begin) ::madvise(p, end - begin, MADV_HUGEPAGE);
#endif
    return p;
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    if (bytes < huge || alignment > huge) return std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
    ::munmap(p, bytes);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
};

std::pmr::memory_resource* arena_upstream() {
  static large_block_resource resource;
  return &resource;
}

// The arena's first block scales with the input so that small inputs stay small and large ones do
// not grow through many doublings; the monotonic resource doubles from there.
std::size_t initial_arena_size(std::size_t text_size) {
  return std::clamp<std::size_t>(text_size, 4096, std::size_t{64} << 20);
}
}  // namespace

source::source(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)), arena_(initial_arena_size(text_.size()), arena_upstream()) {}

const std::vector<std::uint32_t>& source::line_starts() const noexcept {
  std::call_once(lines_built_, [this] {
    // One memchr pass; the table makes locate() a binary search and costs 4 bytes per line.
    const char* const base = text_.data();
    const char* const end = base + text_.size();
    std::size_t lines = 1;
    for (const char* p = base; (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)))) != nullptr;)
      if (++p < end) ++lines;
    line_starts_.reserve(lines);
    line_starts_.push_back(0);
    for (const char* p = base; (p = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)))) != nullptr;)
      if (++p < end) line_starts_.push_back(static_cast<std::uint32_t>(p - base));
  });
  return line_starts_;
}

source::~source() = default;

std::string_view source::text(span s) const noexcept {
  if (s.offset > text_.size()) return {};
  return std::string_view(text_).substr(s.offset, s.length);
}

location source::locate(std::uint32_t offset) const noexcept {
  offset = std::min<std::uint32_t>(offset, static_cast<std::uint32_t>(text_.size()));
  const auto& starts = line_starts();
  auto it = std::upper_bound(starts.begin(), starts.end(), offset);
  const auto line = static_cast<std::uint32_t>(it - starts.begin());  // >= 1: starts[0] == 0
  return {line, offset - starts[line - 1] + 1, offset};
}

std::string_view source::line(std::uint32_t line) const noexcept {
  const auto& starts = line_starts();
  if (line == 0 || line > starts.size()) return {};
  const std::size_t begin = starts[line - 1];
  std::size_t end = line < starts.size() ? starts[line] : text_.size();
  if (end > begin && text_[end - 1] == '\n') --end;
  if (end > begin && text_[end - 1] == '\r') --end;
  return std::string_view(text_).substr(begin, end - begin);
}

span source::span_of(std::string_view part) const noexcept {
  const auto offset = static_cast<std::uint32_t>(part.data() - text_.data());
  return {offset, static_cast<std::uint32_t>(part.size())};
}

void source::over_limit() { throw arena_exhausted(); }

std::string_view source::store(std::string_view text) {
  if (text.empty()) return {};
  auto* out = static_cast<char*>(allocate(text.size(), 1));
  std::memcpy(out, text.data(), text.size());
  return {out, text.size()};
}

}  // namespace nflens
