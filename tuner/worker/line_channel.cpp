#include "tuner/worker/line_channel.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace ktune {

LineReader::Status LineReader::read_line(std::string& line, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    const auto newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return Status::line;
    }
    int wait_ms = -1;
    if (timeout_ms >= 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return Status::timeout;
      wait_ms = static_cast<int>(left.count());
    }
    pollfd entry{fd_, POLLIN, 0};
    const int ready = poll(&entry, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return Status::timeout;
    char chunk[65536];
    const ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return Status::closed;
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

bool write_line(int fd, const std::string& text) {
  const std::string message = text + "\n";
  std::size_t written = 0;
  while (written < message.size()) {
    const ssize_t n = write(fd, message.data() + written, message.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace ktune
