// SPDX-License-Identifier: MIT
#pragma once

// Running the real tools inside a throw-away network namespace, for the kernel suite.

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

namespace nflens::test {

/// Output and exit status of a shell command.
struct command_result {
  int status = -1;
  std::string output;  ///< stdout only
};

/// Runs `cmd` with /bin/sh, feeding `input` on stdin when given (through a temporary file).
inline command_result run_command(const std::string& cmd, const std::string* input = nullptr) {
  std::string full = cmd;
  std::string tmp;
  if (input != nullptr) {
    char path[] = "/tmp/nflens-kernel-XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    const auto written = ::write(fd, input->data(), input->size());
    ::close(fd);
    if (written != static_cast<ssize_t>(input->size())) throw std::runtime_error("short write");
    tmp = path;
    full += " < " + tmp;
  }
  command_result r;
  if (std::FILE* p = ::popen(full.c_str(), "r")) {
    std::array<char, 65536> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
    const int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  if (!tmp.empty()) ::unlink(tmp.c_str());
  return r;
}

/// Why the kernel suite cannot run here, or empty when it can.
inline std::string kernel_unavailable() {
  if (::geteuid() != 0) return "not root";
  for (const char* tool : {"ip", "nft", "iptables-restore", "iptables-save"})
    if (run_command(std::string("command -v ") + tool + " >/dev/null 2>&1").status != 0)
      return std::string(tool) + " not installed";
  const std::string probe = "nflens-probe-" + std::to_string(::getpid());
  if (run_command("ip netns add " + probe + " 2>/dev/null").status != 0) return "cannot create a network namespace";
  run_command("ip netns del " + probe);
  return {};
}

/// A network namespace that exists for the lifetime of this object.
class netns {
 public:
  netns() : name_("nflens-t-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}() % 100000)) {
    if (run_command("ip netns add " + name_).status != 0) throw std::runtime_error("ip netns add failed");
  }
  netns(const netns&) = delete;
  netns& operator=(const netns&) = delete;
  ~netns() { run_command("ip netns del " + name_); }
  /// Runs `cmd` inside the namespace.
  command_result exec(const std::string& cmd, const std::string* input = nullptr) const {
    return run_command("ip netns exec " + name_ + " " + cmd, input);
  }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  std::string name_;
};

}  // namespace nflens::test
