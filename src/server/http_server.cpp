#include "server/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/error.h"

namespace lowbit {

namespace {

constexpr int kIdleTimeoutMs = 30000;  // a request must make progress this often

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Reads more bytes into buf; false on close, error or timeout.
bool read_some(int fd, std::string& buf) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, kIdleTimeoutMs) <= 0) return false;
  char tmp[8192];
  const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
  if (n <= 0) return false;
  buf.append(tmp, static_cast<size_t>(n));
  return true;
}

// Reads one request from fd; on failure replies with the status it deserves
// (nothing when the client just went away) and returns false.
bool read_request(int fd, HttpRequest& req, HttpResponder& out) {
  std::string buf;
  size_t header_end;
  while ((header_end = buf.find("\r\n\r\n")) == std::string::npos) {
    if (buf.size() > HttpServer::kMaxHeaderBytes) {
      reply_json_error(out, 431, "request headers exceed 16 KiB");
      return false;
    }
    if (!read_some(fd, buf)) return false;
  }
  const HttpHead head = parse_http_head(std::string_view(buf.data(), header_end), req);
  if (head.status != 0) {
    reply_json_error(out, head.status, head.why);
    return false;
  }
  req.body = buf.substr(header_end + 4);
  while (req.body.size() < head.content_length)
    if (!read_some(fd, req.body)) return false;
  if (req.body.size() > head.content_length) req.body.resize(head.content_length);  // one request per connection: extra bytes are dropped
  return true;
}

}  // namespace

HttpHead parse_http_head(std::string_view head, HttpRequest& req) {
  const auto refuse = [](int status, const char* why) { return HttpHead{status, why, 0}; };
  if (head.size() > HttpServer::kMaxHeaderBytes) return refuse(431, "request headers exceed 16 KiB");
  const size_t line_end = head.find("\r\n");
  const std::string_view line = head.substr(0, line_end);
  const size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
  if (sp1 == 0 || sp1 == std::string_view::npos || sp2 == sp1 || line.substr(sp2 + 1).rfind("HTTP/1.", 0) != 0)
    return refuse(400, "malformed request line");
  req.method = std::string(line.substr(0, sp1));
  std::string target(line.substr(sp1 + 1, sp2 - sp1 - 1));
  req.path = target.substr(0, target.find('?'));
  req.headers.clear();
  size_t pos = line_end == std::string_view::npos ? head.size() : line_end + 2;
  while (pos < head.size()) {
    size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos) end = head.size();
    const std::string_view h = head.substr(pos, end - pos);
    const size_t colon = h.find(':');
    if (colon == std::string_view::npos || colon == 0) return refuse(400, "malformed header line");
    req.headers[lower(std::string(trim(h.substr(0, colon))))] = std::string(trim(h.substr(colon + 1)));
    pos = end + 2;
  }
  if (req.headers.count("transfer-encoding"))
    return refuse(411, "chunked request bodies are not supported; send Content-Length");
  HttpHead verdict;
  if (auto it = req.headers.find("content-length"); it != req.headers.end()) {
    const std::string& v = it->second;
    if (v.empty() || v.size() > 12 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return refuse(400, "bad Content-Length");
    verdict.content_length = std::stoull(v);
    if (verdict.content_length > HttpServer::kMaxBodyBytes) return refuse(413, "request body exceeds 4 MiB");
  }
  return verdict;
}

void reply_json_error(HttpResponder& out, int status, std::string_view message) {
  const nlohmann::json body = {{"error", {{"message", message}, {"type", "invalid_request_error"}}}};
  out.send(status, "application/json", body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string_view http_reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

bool HttpResponder::write_all(std::string_view data) {
  if (broken_) return false;
  while (!data.empty()) {
    const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      broken_ = true;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void HttpResponder::send(int status, std::string_view content_type, std::string_view body) {
  if (replied_) return;
  replied_ = true;
  std::string head = "HTTP/1.1 " + std::to_string(status) + " " + std::string(http_reason(status)) +
                     "\r\nContent-Type: " + std::string(content_type) +
                     "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  if (write_all(head)) write_all(body);
}

void HttpResponder::begin_stream(int status, std::string_view content_type) {
  if (replied_) return;
  replied_ = streaming_ = true;
  write_all("HTTP/1.1 " + std::to_string(status) + " " + std::string(http_reason(status)) +
            "\r\nContent-Type: " + std::string(content_type) +
            "\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
}

bool HttpResponder::chunk(std::string_view data) {
  if (!streaming_) return false;
  if (data.empty()) return !broken_;  // an empty chunk would end the body
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return write_all(size) && write_all(data) && write_all("\r\n");
}

void HttpResponder::end_stream() {
  if (!streaming_) return;
  streaming_ = false;
  write_all("0\r\n\r\n");
}

HttpServer::HttpServer(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
    fail("serve: cannot resolve host ", host, ": ", ::gai_strerror(rc));
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd < 0) continue;
    const int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 64) == 0) {
      listen_fd_ = fd;
    } else {
      why = std::strerror(errno);
      ::close(fd);
    }
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0) fail("serve: cannot listen on ", host, ":", port, ": ", why);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

HttpServer::~HttpServer() {
  stop();
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return open_connections_ == 0; });
  lock.unlock();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void HttpServer::stop() {
  stopping_.store(true);
  if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
}

void HttpServer::serve(const HttpHandler& handler) {
  while (!stopping_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;  // also notices stop() within 0.2 s
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    std::unique_lock<std::mutex> lock(mutex_);
    if (open_connections_ >= kMaxConnections) {
      lock.unlock();
      HttpResponder out(fd);
      reply_json_error(out, 503, "too many connections");
      ::close(fd);
      continue;
    }
    ++open_connections_;
    lock.unlock();
    std::thread([this, fd, &handler] {
      handle_connection(fd, handler);
      ::close(fd);
      std::lock_guard<std::mutex> guard(mutex_);
      --open_connections_;
      idle_.notify_all();
    }).detach();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return open_connections_ == 0; });
}

void HttpServer::handle_connection(int fd, const HttpHandler& handler) {
  HttpResponder out(fd);
  HttpRequest req;
  if (!read_request(fd, req, out)) return;
  try {
    handler(req, out);
  } catch (const std::exception& e) {
    if (!out.replied()) reply_json_error(out, 500, e.what());
  }
  if (!out.replied()) reply_json_error(out, 500, "the handler sent no reply");
  out.end_stream();
}

}  // namespace lowbit
