// SPDX-License-Identifier: MIT
#pragma once

// The shared benchmark harness: wall time, throughput and peak memory of one piece of work, measured in
// a forked child so that each measurement has its own peak RSS; a check that time and memory grow
// linearly with the input; kpgen inputs generated once and cached; a table on stdout and, on request,
// JSON lines for the issue notes. Benchmarks are programs (bench/bench_*.cpp), never timed unit tests.
//
// A benchmark is a few lines:
//
//   nflens::bench::runner run(argc, argv);                     // --quick, --json FILE, --filter TEXT
//   const std::string dump = nflens::bench::kpgen({"--backend", "iptables", "--services", "10000"});
//   run.measure("iptables parse 10k services", dump.size(), [&] { return parse(dump).ok(); });
//   return run.finish();                                       // non-zero when a check failed

#include <cstddef>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace nflens::bench {

/// What one measurement found. Times in seconds, memory in bytes.
struct sample {
  std::string name;
  std::size_t input_bytes = 0;
  int repetitions = 0;
  double best_seconds = 0;    ///< fastest repetition
  double median_seconds = 0;  ///< median repetition
  /// Peak resident set of the child that did the work (`VmHWM`, reset just before the work), which
  /// includes what it inherited from the parent (the input, shared copy-on-write).
  std::size_t peak_rss_bytes = 0;
  /// Resident set of the child just before the work started; `peak_rss_bytes - start_rss_bytes` is what
  /// the work itself added at its peak.
  std::size_t start_rss_bytes = 0;
  /// Resident set of the child right after the warm-up run, while its result is still live (0 without a
  /// warm-up). Meaningful for work that keeps its result until the next `prepare`, as `measure_parse` does.
  std::size_t after_rss_bytes = 0;
  bool ok = false;    ///< the work returned true every time and the child exited normally
  std::string error;  ///< why not ok (the work returned false, a signal, ...)

  [[nodiscard]] std::size_t added_bytes() const noexcept {
    return peak_rss_bytes > start_rss_bytes ? peak_rss_bytes - start_rss_bytes : 0;
  }
  /// What the result of one run keeps resident (for a parse: its text and syntax tree), so that
  /// `added_bytes() - retained_bytes()` is what the work needed only while it ran.
  [[nodiscard]] std::size_t retained_bytes() const noexcept {
    return after_rss_bytes > start_rss_bytes ? after_rss_bytes - start_rss_bytes : 0;
  }
  /// Input megabytes (10^6 bytes) per second of the best repetition.
  [[nodiscard]] double mb_per_s() const noexcept {
    return best_seconds > 0 ? static_cast<double>(input_bytes) / 1e6 / best_seconds : 0;
  }
};

/// How a measurement is run.
struct options {
  int repetitions = 3;        ///< timed runs of the work in the child
  bool warm_up = true;        ///< one untimed run first (page faults of the input, caches)
  double min_seconds = 0.02;  ///< work faster than this (in the warm-up) is repeated within each timed run
  double max_seconds = 600;   ///< the child is killed after this long and the sample fails
  /// Run before each run of the work, untimed (its memory counts): hand the work its input (a parser that
  /// takes ownership of the text needs a fresh copy each time) and free the previous run's result, so
  /// that the time is the work's alone. Empty: nothing.
  std::function<void()> prepare;
};

/// Runs `work` in a forked child and measures it. The child first returns the heap memory it inherited
/// free (malloc_trim) and resets its high-water mark, so the peak is the work's own plus what is live. `work` returns
/// false when its result was wrong (for example a parse of valid input with errors); the sample is then not ok.
/// Exceptions and signals in the child are caught and reported, never propagated.
[[nodiscard]] sample measure(std::string name, std::size_t input_bytes, const std::function<bool()>& work,
                             const options& opt = {});

/// How time and memory grow over a series of samples of the same work at different input sizes:
/// the exponent b of a least-squares fit `cost = a * size^b` (1 is linear, 2 quadratic), and the
/// largest ratio between the cost per byte of any two samples.
///
/// Costs too small to matter are not judged: when the largest sample takes under
/// `negligible_seconds`, cache sizes, page faults and the allocator's thresholds dominate the fit (a
/// 100 kB input crosses glibc's mmap threshold, a 2 MB one falls out of L2), while a real quadratic
/// blow-up at the full sizes of bench_hostile takes seconds. The same for memory under
/// `negligible_bytes`.
struct growth {
  static constexpr double negligible_seconds = 0.05;
  static constexpr double negligible_bytes = 32.0 * 1024 * 1024;
  double time_exponent = 0;
  double memory_exponent = 0;  ///< of the added memory (`sample::added_bytes`)
  double worst_time_per_byte_ratio = 0;
  bool time_negligible = false;    ///< the largest sample took less than `negligible_seconds`
  bool memory_negligible = false;  ///< the largest sample added less than `negligible_bytes`
  /// Each exponent at most `max_exponent`, or its cost negligible.
  bool linear = false;
};

/// Fits the growth of `samples` (at least two, of different sizes; failed samples are ignored).
/// Sizes below a few megabytes are dominated by fixed costs; give sizes that differ by 2x or more.
[[nodiscard]] growth fit_growth(const std::vector<sample>& samples, double max_exponent = 1.3);

/// Reads a whole file; empty optional when it cannot be read.
[[nodiscard]] std::optional<std::string> read_file(const std::string& path);

/// The output of `../shared/tools/kpgen ARGS...` (a kube-proxy dump), generated once and cached in
/// `$NFLENS_BENCH_CACHE` (default `<build dir>/bench-cache`). Empty optional when kpgen is unavailable
/// (no ../shared, no python3), after printing why.
[[nodiscard]] std::optional<std::string> kpgen(const std::vector<std::string>& args);

/// Collects samples, prints them as a table as they come, and writes JSON lines when asked.
/// Command line: `--quick` (smaller sizes, one repetition: a smoke run), `--json FILE` (one JSON
/// object per sample and per growth check), `--filter TEXT` (only measurements whose name contains
/// TEXT), `--repetitions N`.
class runner {
 public:
  runner(int argc, char** argv);
  runner(const runner&) = delete;
  runner& operator=(const runner&) = delete;
  ~runner();

  /// True with `--quick`: benchmarks then use their small sizes.
  [[nodiscard]] bool quick() const noexcept { return quick_; }
  /// `--repetitions N` (for measurements with options of their own).
  [[nodiscard]] int repetitions() const noexcept { return repetitions_; }
  /// False when `--filter` excludes this name (the benchmark should then not even build its input).
  [[nodiscard]] bool wanted(std::string_view name) const noexcept;

  /// Measures and records one sample (skipped, returning nothing, when not `wanted`).
  std::optional<sample> measure(std::string name, std::size_t input_bytes, const std::function<bool()>& work);
  /// Same, with options of its own.
  std::optional<sample> measure(std::string name, std::size_t input_bytes, const std::function<bool()>& work,
                                options opt);

  /// Records a growth check over `samples`; a non-linear growth makes `finish()` fail.
  growth check_linear(std::string name, const std::vector<sample>& samples, double max_exponent = 1.3);
  /// Records a failed check with a reason (for example memory above a bound); makes `finish()` fail.
  void fail(std::string name, std::string reason);

  /// Prints the summary line; 0 when every sample was ok and every check held, 1 otherwise.
  int finish();

 private:
  void emit_json(const std::string& line);
  bool quick_ = false;
  int repetitions_ = 3;
  std::string filter_;
  std::string json_path_;
  std::FILE* json_ = nullptr;
  int samples_ = 0;
  int failures_ = 0;
};

/// Measures a parser that owns its input (`parse(std::string)` returns its result): each run is handed
/// its own copy of `text` and the previous run's result is freed, both untimed (`options::prepare`), so
/// that the time is the parse's alone; the copy counts in the memory, as the parser holds it. `ok`
/// checks the result.
template <class Parse, class Ok>
std::optional<sample> measure_parse(runner& run, std::string name, const std::string& text, Parse parse, Ok ok) {
  std::string copy;
  std::optional<std::invoke_result_t<Parse, std::string>> parsed;
  options opt;
  opt.repetitions = run.repetitions();
  opt.prepare = [&] {
    parsed.reset();
    copy = text;
  };
  return run.measure(
      std::move(name), text.size(),
      [&] {
        parsed.emplace(parse(std::move(copy)));
        return ok(*parsed);
      },
      opt);
}

/// Formats a byte count as `12.3 MB` (10^6) for the tables.
[[nodiscard]] std::string human_bytes(std::size_t bytes);

}  // namespace nflens::bench
