#include "dataset/input_file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/error.h"
#include "core/interrupt.h"

namespace servebench::dataset {

namespace {
bool is_json_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Everything a non-blocking pipe, FIFO or device gives until EOF. Linux reports a FIFO that no
// writer has opened yet as neither readable nor hung up, so poll() waits for one; throws when
// nothing arrives for `wait_ms`.
std::string read_stream(int fd, int wait_ms) {
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    // SIGINT/SIGTERM (core/interrupt.h) make the second descriptor readable: a FIFO whose writer
    // never finishes does not hold the command.
    pollfd p[2] = {{fd, POLLIN, 0}, {core::interrupt_fd(), POLLIN, 0}};
    const int ready = ::poll(p, p[1].fd >= 0 ? 2 : 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw std::runtime_error(std::strerror(errno));
    core::throw_if_interrupted("reading the dataset");
    if (ready == 0) {
      throw std::runtime_error(bytes.empty()
                                   ? "nothing to read after " + std::to_string(wait_ms) +
                                         " ms (a FIFO that no process writes to?)"
                                   : "the pipe stalled for " + std::to_string(wait_ms) +
                                         " ms after " + std::to_string(bytes.size()) + " bytes");
    }
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      bytes.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      return bytes;  // EOF: the (last) writer closed
    } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      throw std::runtime_error(std::strerror(errno));
    }
  }
}
}  // namespace

InputFile::InputFile(const std::string& path, int pipe_wait_ms) : path_(path) {
  auto fail_open = [&](const std::string& why) {
    throw core::Error(core::ErrorKind::kInput, "--dataset-path",
                      "cannot read '" + path + "': " + why);
  };
  // O_NONBLOCK: opening a FIFO no process writes to would otherwise block forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fail_open(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    const int err = S_ISDIR(st.st_mode) ? EISDIR : errno;
    ::close(fd);
    fail_open(std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    // A pipe (`<(cat f.json)`), FIFO or device: fstat's size means nothing; read to EOF.
    std::string bytes;
    try {
      bytes = read_stream(fd, pipe_wait_ms);
    } catch (const core::Error&) {  // SIGINT/SIGTERM
      ::close(fd);
      throw;
    } catch (const std::runtime_error& e) {
      ::close(fd);
      fail_open(e.what());
    }
    ::close(fd);
    data_ = simdjson::padded_string(bytes);
    if (text().starts_with("\xEF\xBB\xBF")) skipped_ = 3;
    return;
  }
  // One read into a padded buffer: no copy, and simdjson may parse it in place.
  data_ = simdjson::padded_string(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < data_.size()) {
    const ssize_t n = ::read(fd, data_.data() + done, data_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      fail_open(n < 0 ? std::strerror(err) : "the file shrank while being read");
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (text().starts_with("\xEF\xBB\xBF")) skipped_ = 3;
}

std::string InputFile::where(size_t byte_offset) const {
  const std::string_view t = text();
  byte_offset = std::min(byte_offset, t.size());
  const size_t line =
      1 + static_cast<size_t>(
              std::count(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(byte_offset), '\n'));
  return path_ + ":" + std::to_string(line) + " (byte " + std::to_string(byte_offset + skipped_) +
         ")";
}

void InputFile::fail(size_t byte_offset, const std::string& message) const {
  throw core::Error(core::ErrorKind::kInput, where(byte_offset), message);
}

void InputFile::fail_file(const std::string& message) const {
  throw core::Error(core::ErrorKind::kInput, path_, message);
}

size_t text_after_value(std::string_view json) {
  size_t i = 0;
  while (i < json.size() && is_json_space(json[i])) ++i;
  if (i == json.size() || (json[i] != '{' && json[i] != '[')) return std::string_view::npos;
  size_t depth = 0;
  bool in_string = false;
  for (; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      break;
    }
  }
  if (i >= json.size()) return std::string_view::npos;  // never closed: truncated, not trailing
  for (++i; i < json.size(); ++i)
    if (!is_json_space(json[i])) return i;
  return std::string_view::npos;
}

int64_t json_integer(const InputFile& file, simdjson::ondemand::value& value,
                     std::string_view name) {
  const std::string_view raw = value.raw_json_token();
  double number = 0;
  if (value.type() != simdjson::ondemand::json_type::number ||
      value.get_double().get(number) != simdjson::SUCCESS || number != std::floor(number)) {
    file.fail(file.offset_of(raw.data()),
              "\"" + std::string(name) + "\" must be an integer, got " + std::string(raw));
  }
  // Past 1e15 a double no longer holds every integer; no count in a dataset comes near it.
  if (std::abs(number) > 1e15) {
    file.fail(file.offset_of(raw.data()),
              "\"" + std::string(name) + "\" is out of range (" +
                  (number > 0 ? "too large: above 1e15" : "too small: below -1e15") + "), got " +
                  std::string(raw));
  }
  return static_cast<int64_t>(number);
}

}  // namespace servebench::dataset
