// A redis-server of a test's own: loopback, a free port, no persistence, its
// own directory; started in the constructor (answering PING when it
// returns), killed in the destructor. kill() and start() again (same port)
// play a crash and a restart; pause() and resume() (SIGSTOP, SIGCONT) a
// server that accepts connections but never answers.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

#include "tests/temp_dir.h"

namespace kvgate::cache::testing {

class RedisServer {
 public:
  // redis-server on PATH (tests skip without it).
  static bool available() { return std::system("command -v redis-server >/dev/null 2>&1") == 0; }

  // `password`: the server asks every connection for it (requirepass).
  explicit RedisServer(std::string password = "") : port_(free_port()), password_(std::move(password)) { start(); }
  ~RedisServer() { kill(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return port_; }

  void start() {
    if (pid_ > 0) return;
    const std::string port = std::to_string(port_), dir = dir_.path().string();
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      if (password_.empty())
        execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--dir", dir.c_str(), "--logfile", "redis.log", static_cast<char*>(nullptr));
      else
        execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--dir", dir.c_str(), "--logfile", "redis.log", "--requirepass",
               password_.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!answers_ping()) {
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("redis-server did not answer PING");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  // SIGKILL, and reaped: nothing of it is left running.
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);  // a paused server dies as well
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  void pause() { ::kill(pid_, SIGSTOP); }
  void resume() { ::kill(pid_, SIGCONT); }

 private:
  static int free_port() {
    const int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (s < 0 || bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("no free port");
    close(s);
    return ntohs(a.sin_port);
  }

  bool answers_ping() const {
    const int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = false;
    if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && write(s, "PING\r\n", 6) == 6) {
      char buf[8] = {};
      // +PONG, or -NOAUTH from a server that wants a password: up either way.
      ok = read(s, buf, 7) >= 5 && (std::string(buf, 5) == "+PONG" || std::string(buf, 7) == "-NOAUTH");
    }
    close(s);
    return ok;
  }

  kvgate::testing::TempDir dir_;
  const int port_;
  const std::string password_;
  pid_t pid_ = -1;
};

}  // namespace kvgate::cache::testing
