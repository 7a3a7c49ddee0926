// SPDX-License-Identifier: MIT
#include "harness.hpp"

#include <fmt/format.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace nflens::bench {

namespace {

// What the child sends back through the pipe.
struct child_report {
  double best = 0;
  double median = 0;
  std::size_t peak_rss = 0;
  std::size_t start_rss = 0;
  std::size_t after_rss = 0;
  int ok = 0;
  char error[240] = {};
};

// A field of /proc/self/status in bytes (`VmRSS`, `VmHWM`: kB there).
std::size_t status_bytes(std::string_view field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with(field) && line.size() > field.size() && line[field.size()] == ':')
      return std::strtoull(line.c_str() + field.size() + 1, nullptr, 10) * 1024;
  return 0;
}

// The child inherits the parent's heap, including memory the parent freed but the allocator kept
// resident; the work would reuse it without the resident set growing. Give it back first, then reset
// the high-water mark to the current resident set (Linux >= 4.0), so that the peak is the work's own.
// Large blocks are then fresh mappings as in a new process: glibc's mmap threshold, raised by the
// parent's frees, would otherwise serve some sizes from already-faulted heap and others not, which
// shows up as a false non-linearity between sizes.
void reset_peak() {
  ::malloc_trim(0);
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  if (std::FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

[[noreturn]] void run_child(int fd, const std::function<bool()>& work, const options& opt) {
  child_report r;
  auto set_error = [&](std::string_view what) {
    const std::size_t n = std::min(what.size(), sizeof r.error - 1);
    std::memcpy(r.error, what.data(), n);
    r.error[n] = '\0';
  };
  try {
    reset_peak();
    r.start_rss = status_bytes("VmRSS");
    bool ok = true;
    using clock = std::chrono::steady_clock;
    // Work that takes less than `min_seconds` is repeated within one timing, so that timer resolution
    // and one-off page faults do not pass for a property of the input size.
    int inner = 1;
    // One run of the work, timed without `prepare`.
    auto once = [&]() -> double {
      if (opt.prepare) opt.prepare();
      const auto t0 = clock::now();
      ok = work() && ok;
      return std::chrono::duration<double>(clock::now() - t0).count();
    };
    if (opt.warm_up) {
      const double first = once();
      r.after_rss = status_bytes("VmRSS");  // the warm-up's result is still live: what it keeps resident
      if (first < opt.min_seconds)
        inner = static_cast<int>(std::min(1e6, std::ceil(opt.min_seconds / std::max(first, 1e-7))));
    }
    std::vector<double> times;
    for (int i = 0; i < std::max(opt.repetitions, 1); ++i) {
      double total = 0;
      for (int k = 0; k < inner; ++k) total += once();
      times.push_back(total / inner);
    }
    if (opt.prepare) opt.prepare();  // the last result is freed inside the measurement, as every other
    std::sort(times.begin(), times.end());
    r.best = times.front();
    r.median = times[times.size() / 2];
    r.ok = ok ? 1 : 0;
    if (!ok) set_error("the work reported a wrong result");
  } catch (const std::exception& e) {
    set_error(std::string("exception: ") + e.what());
  } catch (...) {
    set_error("unknown exception");
  }
  r.peak_rss = status_bytes("VmHWM");
  const auto* p = reinterpret_cast<const char*>(&r);
  std::size_t left = sizeof r;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  ::_exit(0);
}

std::filesystem::path shared_root() {
  if (const char* env = std::getenv("NFLENS_SHARED"); env != nullptr && *env != '\0') return env;
  return std::filesystem::path(NFLENS_SOURCE_ROOT).parent_path() / "shared";
}

std::filesystem::path cache_root() {
  if (const char* env = std::getenv("NFLENS_BENCH_CACHE"); env != nullptr && *env != '\0') return env;
  return std::filesystem::path(NFLENS_BUILD_ROOT) / "bench-cache";
}

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

double fit_exponent(const std::vector<std::pair<double, double>>& points) {
  // Least squares of log(cost) over log(size).
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [x, y] : points) {
    const double lx = std::log(x), ly = std::log(y);
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  const auto n = static_cast<double>(points.size());
  const double den = n * sxx - sx * sx;
  return den > 0 ? (n * sxy - sx * sy) / den : 0;
}

}  // namespace

sample measure(std::string name, std::size_t input_bytes, const std::function<bool()>& work, const options& opt) {
  sample s;
  s.name = std::move(name);
  s.input_bytes = input_bytes;
  s.repetitions = std::max(opt.repetitions, 1);
  int fds[2];
  if (::pipe(fds) != 0) {
    s.error = "pipe failed";
    return s;
  }
  std::fflush(nullptr);  // no buffered output duplicated into the child
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    s.error = "fork failed";
    return s;
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_child(fds[1], work, opt);
  }
  ::close(fds[1]);
  child_report r;
  std::size_t got = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(opt.max_seconds);
  bool timed_out = false;
  while (got < sizeof r) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 1000))) <= 0) continue;
    const ssize_t n = ::read(fds[0], reinterpret_cast<char*>(&r) + got, sizeof r - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (timed_out) {
    s.error = fmt::format("killed after {} s", opt.max_seconds);
  } else if (WIFSIGNALED(status)) {
    s.error = fmt::format("child died of signal {} ({})", WTERMSIG(status), ::strsignal(WTERMSIG(status)));
  } else if (got != sizeof r) {
    s.error = "child exited without a report";
  } else {
    s.best_seconds = r.best;
    s.median_seconds = r.median;
    s.peak_rss_bytes = r.peak_rss;
    s.start_rss_bytes = r.start_rss;
    s.after_rss_bytes = r.after_rss;
    s.ok = r.ok != 0;
    s.error = r.error;
  }
  return s;
}

growth fit_growth(const std::vector<sample>& samples, double max_exponent) {
  std::vector<std::pair<double, double>> time, memory;
  double lo = 0, hi = 0, most_seconds = 0, most_bytes = 0;
  // Below one page the added memory is noise; floor it so an input that needs no memory fits flat.
  const auto page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  for (const auto& s : samples) {
    if (!s.ok || s.input_bytes == 0 || s.best_seconds <= 0) continue;
    const double size = static_cast<double>(s.input_bytes);
    time.emplace_back(size, s.best_seconds);
    memory.emplace_back(size, std::max(static_cast<double>(s.added_bytes()), 64 * page));
    most_seconds = std::max(most_seconds, s.best_seconds);
    most_bytes = std::max(most_bytes, static_cast<double>(s.added_bytes()));
    const double per_byte = s.best_seconds / size;
    lo = lo == 0 ? per_byte : std::min(lo, per_byte);
    hi = std::max(hi, per_byte);
  }
  growth g;
  if (time.size() < 2) return g;
  g.time_exponent = fit_exponent(time);
  g.memory_exponent = fit_exponent(memory);
  g.worst_time_per_byte_ratio = lo > 0 ? hi / lo : 0;
  g.time_negligible = most_seconds < growth::negligible_seconds;
  g.memory_negligible = most_bytes < growth::negligible_bytes;
  g.linear = (g.time_negligible || g.time_exponent <= max_exponent) &&
             (g.memory_negligible || g.memory_exponent <= max_exponent);
  return g;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;
  return text;
}

std::optional<std::string> kpgen(const std::vector<std::string>& args) {
  const auto tool = shared_root() / "tools" / "kpgen";
  if (!std::filesystem::exists(tool)) {
    fmt::print(stderr, "bench: {} not found (set NFLENS_SHARED); kpgen inputs skipped\n", tool.string());
    return std::nullopt;
  }
  std::string key = "kpgen";
  std::string command = "python3 " + shell_quote(tool.string());
  for (const auto& a : args) {
    key += '_';
    for (const char c : a) key += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
    command += ' ' + shell_quote(a);
  }
  std::error_code ec;
  std::filesystem::create_directories(cache_root(), ec);
  const auto path = cache_root() / (key + ".txt");
  if (auto cached = read_file(path.string())) return cached;
  const auto partial = path.string() + ".partial";
  fmt::print(stderr, "bench: generating {}\n", path.string());
  command += " > " + shell_quote(partial);
  if (std::system(command.c_str()) != 0) {
    fmt::print(stderr, "bench: kpgen failed: {}\n", command);
    std::filesystem::remove(partial, ec);
    return std::nullopt;
  }
  std::filesystem::rename(partial, path, ec);
  return read_file(path.string());
}

std::string human_bytes(std::size_t bytes) {
  const auto b = static_cast<double>(bytes);
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.1f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} kB", b / 1e3);
  return fmt::format("{} B", bytes);
}

runner::runner(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--quick") {
      quick_ = true;
      repetitions_ = 1;
    } else if (arg == "--json" && i + 1 < argc) {
      json_path_ = argv[++i];
    } else if (arg == "--filter" && i + 1 < argc) {
      filter_ = argv[++i];
    } else if (arg == "--repetitions" && i + 1 < argc) {
      repetitions_ = std::max(1, std::atoi(argv[++i]));
    } else {
      fmt::print(stderr, "usage: {} [--quick] [--json FILE] [--filter TEXT] [--repetitions N]\n", argv[0]);
      std::exit(2);
    }
  }
  if (!json_path_.empty()) {
    json_ = std::fopen(json_path_.c_str(), "w");
    if (json_ == nullptr) {
      fmt::print(stderr, "bench: cannot write {}\n", json_path_);
      std::exit(2);
    }
  }
  fmt::print("{:<52} {:>10} {:>9} {:>9} {:>9} {:>10} {:>10} {:>10}\n", "benchmark", "input", "best s", "median s",
             "MB/s", "peak RSS", "added", "kept");
}

runner::~runner() {
  if (json_ != nullptr) std::fclose(json_);
}

bool runner::wanted(std::string_view name) const noexcept {
  return filter_.empty() || name.find(filter_) != std::string_view::npos;
}

std::optional<sample> runner::measure(std::string name, std::size_t input_bytes, const std::function<bool()>& work) {
  options opt;
  opt.repetitions = repetitions_;
  return measure(std::move(name), input_bytes, work, opt);
}

std::optional<sample> runner::measure(std::string name, std::size_t input_bytes, const std::function<bool()>& work,
                                      options opt) {
  if (!wanted(name)) return std::nullopt;
  if (quick_) opt.repetitions = 1;
  sample s = bench::measure(std::move(name), input_bytes, work, opt);
  ++samples_;
  if (!s.ok) ++failures_;
  fmt::print("{:<52} {:>10} {:>9.4f} {:>9.4f} {:>9.1f} {:>10} {:>10} {:>10}{}\n", s.name, human_bytes(s.input_bytes),
             s.best_seconds, s.median_seconds, s.mb_per_s(), human_bytes(s.peak_rss_bytes),
             human_bytes(s.added_bytes()), human_bytes(s.retained_bytes()), s.ok ? "" : "  FAILED: " + s.error);
  std::fflush(stdout);
  emit_json(nlohmann::json{
      {"kind", "sample"},
      {"name", s.name},
      {"input_bytes", s.input_bytes},
      {"repetitions", s.repetitions},
      {"best_seconds", s.best_seconds},
      {"median_seconds", s.median_seconds},
      {"mb_per_s", s.mb_per_s()},
      {"peak_rss_bytes", s.peak_rss_bytes},
      {"added_bytes", s.added_bytes()},
      {"retained_bytes", s.retained_bytes()},
      {"ok", s.ok},
      {"error",
       s.error}}.dump());
  return s;
}

growth runner::check_linear(std::string name, const std::vector<sample>& samples, double max_exponent) {
  const growth g = fit_growth(samples, max_exponent);
  if (!g.linear) ++failures_;
  fmt::print("  growth {:<43} time ~ size^{:.2f}{}, memory ~ size^{:.2f}{}, time/byte spread {:.2f}x: {}\n", name,
             g.time_exponent, g.time_negligible ? " (negligible)" : "", g.memory_exponent,
             g.memory_negligible ? " (negligible)" : "", g.worst_time_per_byte_ratio,
             g.linear ? "linear" : fmt::format("NOT LINEAR (limit {:.2f})", max_exponent));
  std::fflush(stdout);
  emit_json(nlohmann::json{{"kind", "growth"},
                           {"name", name},
                           {"time_exponent", g.time_exponent},
                           {"memory_exponent", g.memory_exponent},
                           {"worst_time_per_byte_ratio", g.worst_time_per_byte_ratio},
                           {"time_negligible", g.time_negligible},
                           {"memory_negligible", g.memory_negligible},
                           {"linear", g.linear}}
                .dump());
  return g;
}

void runner::fail(std::string name, std::string reason) {
  ++failures_;
  fmt::print("  FAILED {}: {}\n", name, reason);
  emit_json(nlohmann::json{{"kind", "check"}, {"name", name}, {"ok", false}, {"error", reason}}.dump());
}

void runner::emit_json(const std::string& line) {
  if (json_ == nullptr) return;
  std::fputs(line.c_str(), json_);
  std::fputc('\n', json_);
  std::fflush(json_);
}

int runner::finish() {
  fmt::print("\n{} measurements, {} failed checks or samples\n", samples_, failures_);
  return failures_ == 0 ? 0 : 1;
}

}  // namespace nflens::bench
