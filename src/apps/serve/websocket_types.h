// A WebSocket connection as a route sees it, free of Boost (http_types.h's counterpart): the server core upgrades a
// GET whose path has an opener (HttpServerOptions::websocket_routes), and from then on the route's handler reads
// whole messages and answers through the channel. websocket_session.cpp holds the Beast side.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "apps/serve/http_types.h"

namespace kiln::serve {

// The server side of one connection. Thread-safe: messages are sent in the order send() was called.
class WebSocketChannel {
 public:
  virtual ~WebSocketChannel() = default;
  virtual void send(std::string message, bool binary) = 0;
  // A close frame with `reason` after what is queued; later sends are dropped.
  virtual void close(const std::string& reason) = 0;
};

// Called on the connection's strand, one call at a time: on_open once, then each message whole, then on_closed once
// (the client closed or went away, or the server stops); the channel drops sends after on_closed.
class WebSocketHandler {
 public:
  virtual ~WebSocketHandler() = default;
  virtual void on_open(std::shared_ptr<WebSocketChannel> channel) = 0;
  virtual void on_message(std::string message, bool binary) = 0;
  virtual void on_closed() = 0;
};

// A handler for the upgrade request (its path, query and headers), or none and the HTTP answer refusing it.
struct WebSocketUpgrade {
  std::shared_ptr<WebSocketHandler> handler;
  HttpResponse refusal;
};
using WebSocketOpener = std::function<WebSocketUpgrade(const HttpRequest&)>;

}  // namespace kiln::serve
