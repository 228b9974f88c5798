// Newline-delimited messages over file descriptors, with deadlines (poll), for the worker pipes.
#pragma once

#include <string>

namespace ktune {

class LineReader {
 public:
  enum class Status { line, timeout, closed };
  explicit LineReader(int fd) : fd_(fd) {}
  // Reads one line (without the newline). timeout_ms < 0 waits forever.
  Status read_line(std::string& line, int timeout_ms);
  int fd() const { return fd_; }

 private:
  int fd_;
  std::string buffer_;
};

// Writes text + '\n' completely; returns false if the other end is gone.
bool write_line(int fd, const std::string& text);

}  // namespace ktune
