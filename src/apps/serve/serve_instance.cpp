// kiln serve on background threads of the calling process (kiln.serve in Python).
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "apps/serve/serve_session.h"
#include "kiln/apps/serve.h"

namespace kiln {

namespace {

// SIGINT and SIGTERM blocked on the calling thread while it lives: the threads started meanwhile (the server's, gRPC's,
// ONNX Runtime's) inherit the mask, so the host's handler (Python's KeyboardInterrupt) runs on the host's thread.
class HostSignalsKept {
 public:
  HostSignalsKept() {
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGINT);
    sigaddset(&blocked, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &blocked, &m_previous);
  }
  ~HostSignalsKept() { pthread_sigmask(SIG_SETMASK, &m_previous, nullptr); }
  HostSignalsKept(const HostSignalsKept&) = delete;
  HostSignalsKept& operator=(const HostSignalsKept&) = delete;

 private:
  sigset_t m_previous;
};

class BackgroundServe final : public ServeInstance {
 public:
  explicit BackgroundServe(std::unique_ptr<serve::ServeSession> session)
      : m_session(std::move(session)), m_port(m_session->port()), m_grpc_port(m_session->grpc_port()) {
    m_thread = std::thread([this] {
      m_session->run();
      m_running.store(false);
    });
  }
  ~BackgroundServe() override { stop(); }

  int32_t port() const override { return m_port; }
  int32_t grpc_port() const override { return m_grpc_port; }
  bool running() const override { return m_running.load(); }

  void stop() override {
    std::lock_guard<std::mutex> lock(m_stop_mutex);
    if (!m_thread.joinable()) return;
    m_session->stop();
    m_thread.join();
    m_session.reset();
  }

 private:
  std::unique_ptr<serve::ServeSession> m_session;
  int32_t m_port;
  int32_t m_grpc_port;
  std::atomic<bool> m_running{true};
  std::mutex m_stop_mutex;
  std::thread m_thread;
};

}  // namespace

Result<std::unique_ptr<ServeInstance>> ServeInstance::start(const ServeConfig& config, const LogFn& log) {
  HostSignalsKept kept;
  KILN_TRY_ASSIGN(auto session, serve::ServeSession::open(config, log, /*handle_signals=*/false));
  return std::unique_ptr<ServeInstance>(std::make_unique<BackgroundServe>(std::move(session)));
}

}  // namespace kiln
