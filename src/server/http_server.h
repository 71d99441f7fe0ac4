// A small HTTP/1.1 server on POSIX sockets: what `lowbit serve` needs and no
// more. One thread per connection (at most kMaxConnections at once), one
// request per connection (the reply closes it), bodies sent with
// Content-Length or streamed chunked. Requests are bounded: headers 16 KiB,
// body kMaxBodyBytes, 30 s without progress; a request over a bound gets its
// 4xx reply and the connection is closed. Nothing here knows about models.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace lowbit {

struct HttpRequest {
  std::string method;                         // "GET", "POST", ...
  std::string path;                           // without the query string
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

// What a request's head (the bytes before its blank line) says.
struct HttpHead {
  int status = 0;  // 0: accepted; else the 4xx status to refuse it with
  std::string why;  // the refusal's message
  size_t content_length = 0;  // the body's bytes to read
};
// Fills req's method, path and headers from head; never throws. Exposed for
// the fuzz test.
HttpHead parse_http_head(std::string_view head, HttpRequest& req);

// Writes one reply: either send() once, or begin_stream(), chunk()s, end_stream().
class HttpResponder {
 public:
  explicit HttpResponder(int fd) : fd_(fd) {}
  void send(int status, std::string_view content_type, std::string_view body);
  void begin_stream(int status, std::string_view content_type);
  // False once the client is gone (its socket refuses the write): stop producing.
  bool chunk(std::string_view data);
  void end_stream();
  bool replied() const { return replied_; }

 private:
  bool write_all(std::string_view data);
  int fd_;
  bool replied_ = false, streaming_ = false, broken_ = false;
};

using HttpHandler = std::function<void(const HttpRequest&, HttpResponder&)>;

class HttpServer {
 public:
  static constexpr int kMaxConnections = 32;
  static constexpr size_t kMaxHeaderBytes = 16 << 10;
  static constexpr size_t kMaxBodyBytes = 4 << 20;

  // Binds and listens (port 0: any free port; port() tells which). Throws Error.
  HttpServer(const std::string& host, int port);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  // Accepts connections until stop(); each request goes to handler on its
  // connection's thread. A handler that throws gets a 500 reply sent for it
  // (if it had not replied yet).
  void serve(const HttpHandler& handler);
  // From any thread: serve() returns once the connections it accepted are done.
  void stop();

 private:
  void handle_connection(int fd, const HttpHandler& handler);

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable idle_;
  int open_connections_ = 0;  // under mutex_
};

// An error reply as JSON, {"error": {"message": ..., "type": "invalid_request_error"}}:
// what this server sends for a request it refuses, and what its handlers send
// (invalid UTF-8 in the message becomes U+FFFD).
void reply_json_error(HttpResponder& out, int status, std::string_view message);

// The reason phrase of a status code this server sends.
std::string_view http_reason(int status);

}  // namespace lowbit
