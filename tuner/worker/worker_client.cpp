#include "tuner/worker/worker_client.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <vector>

#include "tuner/core/errors.hpp"
#include "tuner/worker/protocol.hpp"
#include "tuner/worker/worker_main.hpp"

namespace ktune {
namespace {

constexpr std::size_t kStderrTailBytes = 4096;

// The process groups of the workers in use (one per device a tune drives), for
// kill_active_workers() from a signal handler: a fixed table of atomics, which a handler may read.
constexpr std::size_t kMaxTrackedWorkers = 256;
std::atomic<pid_t> g_active_workers[kMaxTrackedWorkers];
std::atomic<bool> g_workers_abandoned{false};

void track_worker(pid_t pid) {
  for (auto& slot : g_active_workers) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pid)) return;
  }
}

void untrack_worker(pid_t pid) {
  for (auto& slot : g_active_workers) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

std::string self_executable() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw std::runtime_error("cannot find the ktune executable (/proc/self/exe)");
  return std::string(path, static_cast<std::size_t>(n));
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "worker killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "worker exited with status " + std::to_string(WEXITSTATUS(status));
  return "worker ended";
}

int to_ms(double seconds) {
  return seconds <= 0 ? -1 : static_cast<int>(std::min(seconds * 1000.0, static_cast<double>(INT_MAX)));
}

// Signals sent from outside the worker, as opposed to those its own code raises when a kernel
// goes wrong (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP).
bool killed_from_outside(int signal) {
  return signal == SIGKILL || signal == SIGTERM || signal == SIGINT || signal == SIGHUP || signal == SIGQUIT ||
         signal == SIGUSR1 || signal == SIGUSR2;
}

void throw_worker_error(const nlohmann::json& reply) {
  const std::string message = reply.value("error", std::string("worker failed"));
  switch (static_cast<ExitCode>(reply.value("exit_code", 1))) {
    case ExitCode::bad_input: throw InputError(message);
    case ExitCode::backend_absent: throw BackendUnavailable(message);
    default: throw KtuneError(ExitCode::check_failed, message);
  }
}

}  // namespace

void kill_active_workers() {
  for (auto& slot : g_active_workers) {
    const pid_t pid = slot.load();
    if (pid > 0) kill(-pid, SIGKILL);
  }
}

void abandon_workers() {
  g_workers_abandoned.store(true);
  kill_active_workers();
}

bool workers_abandoned() { return g_workers_abandoned.load(); }

WorkerClient::WorkerClient(std::string backend, int device_index)
    : backend_(std::move(backend)), device_index_(device_index) {}

WorkerClient::~WorkerClient() { stop(true); }

void WorkerClient::start() {
  int requests[2], responses[2], errors[2];
  if (pipe2(requests, O_CLOEXEC) != 0 || pipe2(responses, O_CLOEXEC) != 0 || pipe2(errors, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create worker pipes: ") + std::strerror(errno));
  const std::string exe = self_executable();
  const std::string device = std::to_string(device_index_);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot start a worker: ") + std::strerror(errno));
  if (pid == 0) {
    // Dies with the tuner, however the tuner ends (kill -9 included).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(1);  // the tuner is already gone
    // Own process group: Ctrl-C in the terminal stops the tuner, which then ends the worker,
    // instead of killing the worker mid-measurement and recording a false crash.
    setpgid(0, 0);
    // Move the pipe ends above the target numbers first, so no dup2 overwrites an end that is
    // still to be moved; dup2 clears close-on-exec on the targets.
    const int request_end = fcntl(requests[0], F_DUPFD_CLOEXEC, 10);
    const int response_end = fcntl(responses[1], F_DUPFD_CLOEXEC, 10);
    const int error_end = fcntl(errors[1], F_DUPFD_CLOEXEC, 10);
    if (request_end < 0 || response_end < 0 || error_end < 0) _exit(126);
    dup2(request_end, kWorkerRequestFd);
    dup2(response_end, kWorkerResponseFd);
    dup2(error_end, STDERR_FILENO);
    dup2(error_end, STDOUT_FILENO);  // a chatty kernel must not corrupt the protocol
    std::vector<std::string> args{exe, "worker", "--backend", backend_, "--device", device};
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  close(requests[0]);
  close(responses[1]);
  close(errors[1]);
  pid_ = pid;
  track_worker(pid);
  request_fd_ = requests[1];
  responses_ = std::make_unique<LineReader>(responses[0]);
  stderr_fd_ = errors[0];
  {
    std::lock_guard lock(stderr_mutex_);
    stderr_text_.clear();
  }
  stderr_drain_ = std::thread([this, fd = stderr_fd_] {
    char chunk[4096];
    ssize_t n;
    while ((n = read(fd, chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR)) {
      if (n < 0) continue;
      std::lock_guard lock(stderr_mutex_);
      stderr_text_.append(chunk, static_cast<std::size_t>(n));
      if (stderr_text_.size() > kStderrTailBytes) stderr_text_.erase(0, stderr_text_.size() - kStderrTailBytes);
    }
  });
  if (started_once_) ++restarts_;
  started_once_ = true;
  prepared_.clear();  // a fresh process has no problem loaded
  reference_pending_ = false;
}

void WorkerClient::stop(bool graceful) {
  if (pid_ <= 0) return;
  if (graceful) write_line(request_fd_, R"({"op":"quit"})");
  close(request_fd_);  // EOF also tells the worker to exit
  int status = 0;
  bool reaped = false;
  if (graceful) {
    for (int i = 0; i < 100 && !reaped; ++i) {  // up to 1 s to exit by itself
      reaped = waitpid(pid_, &status, WNOHANG) == pid_;
      if (!reaped) usleep(10000);
    }
  }
  if (!reaped) {
    kill(-pid_, SIGKILL);  // the whole group: anything the worker started goes too
    waitpid(pid_, &status, 0);
  }
  untrack_worker(pid_);
  pid_ = -1;
  release_channels();
}

void WorkerClient::release_channels() {
  if (stderr_drain_.joinable()) stderr_drain_.join();  // ends at EOF, once the worker is gone
  close(stderr_fd_);
  close(responses_->fd());
  responses_.reset();
}

std::string WorkerClient::stderr_tail() {
  std::lock_guard lock(stderr_mutex_);
  std::string tail = stderr_text_;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  return tail;
}

bool WorkerClient::exchange(const nlohmann::json& request, double timeout_s, nlohmann::json& reply,
                            EvaluationResult& failure) {
  if (g_workers_abandoned.load()) {  // ktune is stopping: no fresh worker, no request
    if (pid_ > 0) stop(false);
    failure.outcome = Outcome::crashed;
    failure.message = "not evaluated: ktune is stopping";
    last_death_signal_ = 0;
    return false;
  }
  if (pid_ <= 0) start();
  std::string line;
  LineReader::Status status = LineReader::Status::closed;
  if (write_line(request_fd_, request.dump())) status = responses_->read_line(line, to_ms(timeout_s));
  if (status == LineReader::Status::line) {
    reply = nlohmann::json::parse(line);
    return true;
  }
  if (status == LineReader::Status::timeout) {
    stop(false);
    failure.outcome = Outcome::timeout;
    char text[96];
    std::snprintf(text, sizeof text, "no answer within %.1f s; worker killed and restarted", timeout_s);
    failure.message = text;
    return false;
  }
  // The worker closed its end: it died. Reap it to learn how.
  // The worker closed its end, so it is dying; give it a moment to finish, then make sure.
  int wait_status = 0;
  bool reaped = false;
  for (int i = 0; i < 200 && !reaped; ++i) {
    reaped = waitpid(pid_, &wait_status, WNOHANG) == pid_;
    if (!reaped) usleep(10000);
  }
  kill(-pid_, SIGKILL);  // leftovers of its group, or the worker itself if it lingered
  if (!reaped) waitpid(pid_, &wait_status, 0);
  untrack_worker(pid_);
  pid_ = -1;
  close(request_fd_);
  release_channels();
  const std::string how = describe_exit(wait_status);
  last_death_signal_ = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
  failure.outcome = Outcome::crashed;
  const std::string tail = stderr_tail();
  failure.message = how + (tail.empty() ? "" : "; worker stderr: " + tail);
  return false;
}

DeviceInfo WorkerClient::hello(double timeout_s) {
  nlohmann::json reply;
  EvaluationResult failure;
  if (!exchange({{"op", "hello"}}, timeout_s, reply, failure))
    throw BackendUnavailable("the " + backend_ + " worker failed while opening device " + std::to_string(device_index_) +
                             ": " + failure.message);
  if (!reply.value("ok", false)) throw_worker_error(reply);
  return DeviceInfo::from_json(reply.at("device"));
}

EvaluationResult WorkerClient::evaluate(const Problem& problem, const Config& config, const VariantBuild& build,
                                        const MeasureSettings& settings, double timeout_s, double setup_timeout_s) {
  // A worker killed by a signal that a kernel does not raise itself (SIGKILL from the OOM killer
  // or a user, SIGTERM, ...) says nothing about the config: it is evaluated once more in a fresh
  // worker before being recorded as crashed, so one outside kill cannot blacklist a good config.
  last_death_signal_ = 0;
  EvaluationResult result;
  try {
    result = evaluate_once(problem, config, build, settings, timeout_s, setup_timeout_s);
  } catch (const CheckFailed&) {  // the problem's preparation failed: retried too when killed from outside
    if (!killed_from_outside(last_death_signal_)) throw;
    result.outcome = Outcome::crashed;
  }
  const int signal = last_death_signal_;
  if (result.outcome != Outcome::crashed || !killed_from_outside(signal) || g_workers_abandoned.load()) return result;
  const double first_prepare = last_prepare_seconds_;
  result = evaluate_once(problem, config, build, settings, timeout_s, setup_timeout_s);
  last_prepare_seconds_ += first_prepare;
  result.environment["retried_after_signal"] = signal;
  if (!result.message.empty()) result.message += "; ";
  result.message += std::string("evaluated again after its first worker was killed by signal ") +
                    std::to_string(signal) + " (" + strsignal(signal) + ")";
  return result;
}

EvaluationResult WorkerClient::evaluate_once(const Problem& problem, const Config& config, const VariantBuild& build,
                                             const MeasureSettings& settings, double timeout_s, double setup_timeout_s) {
  // Inputs and the float64 reference first, in a request of their own: for 10^8-element
  // problems they take longer than a config may, and they are the harness's work, not the
  // config's. A failure here is the harness's too (out of host memory, say).
  last_prepare_seconds_ = 0;
  // Problem::key() leaves out the family: one worker serves several families (ktune bench), and
  // two of them at the same shape need inputs and references of their own.
  const std::string key = problem.family + ":" + problem.key() + "#" + std::to_string(settings.seed);
  if (pid_ <= 0 || prepared_ != key) {
    const auto start = std::chrono::steady_clock::now();
    nlohmann::json reply;
    EvaluationResult failure;
    if (!exchange({{"op", "prepare"}, {"problem", problem.to_json()}, {"seed", settings.seed}}, setup_timeout_s,
                  reply, failure))
      throw CheckFailed("the " + backend_ + " worker failed while preparing the inputs and float64 reference of " +
                        problem.key() + ": " + failure.message +
                        (failure.outcome == Outcome::timeout ? " (the limit is --setup-timeout)" : ""));
    if (!reply.value("ok", false)) throw_worker_error(reply);
    prepared_ = key;
    reference_pending_ = !reply.value("reference_ready", true);
    last_prepare_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const nlohmann::json request = {{"op", "evaluate"},
                                  {"problem", problem.to_json()},
                                  {"config", protocol::config_to_json(config)},
                                  {"build", build.to_json()},
                                  {"settings", settings.to_json()}};
  nlohmann::json reply;
  EvaluationResult failure;
  // While the worker still computes the problem's reference, a config may wait for it before its
  // outputs are checked: that wait is set-up, allowed the set-up's time, not the config's.
  if (!exchange(request, reference_pending_ ? timeout_s + setup_timeout_s : timeout_s, reply, failure)) return failure;
  if (!reply.value("ok", false)) throw_worker_error(reply);
  reference_pending_ = !reply.value("reference_ready", true);
  if (reply.value("restart", false)) stop(true);  // the worker is exiting; reap it now
  return EvaluationResult::from_json(reply.at("result"));
}

BuiltVariant WorkerClient::compile(const Problem& problem, const Config& config, const std::string& arch,
                                   BuildEffort effort, const std::vector<std::string>& launch_only, double timeout_s) {
  const nlohmann::json request = {{"op", "compile"},
                                  {"problem", problem.to_json()},
                                  {"config", protocol::config_to_json(config)},
                                  {"arch", arch},
                                  {"fast", effort == BuildEffort::fast_check},
                                  {"launch_only", launch_only}};
  nlohmann::json reply;
  EvaluationResult failure;
  BuiltVariant built;
  if (!exchange(request, timeout_s, reply, failure)) {
    built.log = "the compile process failed: " + failure.message;
    return built;
  }
  if (!reply.value("ok", false)) {
    built.log = reply.value("error", std::string("the compile process refused the request"));
    return built;
  }
  const auto& variant = reply.at("variant");
  built.ok = variant.at("ok").get<bool>();
  built.log = variant.at("log").get<std::string>();
  built.build = VariantBuild::from_json(variant.at("build"));
  return built;
}

}  // namespace ktune
