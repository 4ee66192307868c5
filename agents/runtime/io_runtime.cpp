#include "agents/runtime/io_runtime.hpp"

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <chrono>
#include <memory>
#include <optional>

namespace gtmesh::agents {

struct io_runtime::impl {
  asio::io_context io{1};
  asio::ssl::context tls{asio::ssl::context::tls_client};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard;
  std::thread thread;
};

io_runtime::io_runtime() : impl_(std::make_unique<impl>()) {
  impl_->tls.set_verify_mode(asio::ssl::verify_none);
}

io_runtime::~io_runtime() {
  stop();
}

asio::io_context& io_runtime::context() noexcept {
  return impl_->io;
}

asio::ssl::context& io_runtime::tls_client() noexcept {
  return impl_->tls;
}

void io_runtime::post(std::function<void()> fn) {
  asio::post(impl_->io, std::move(fn));
}

void io_runtime::post_after(int64_t delay_ms, std::function<void()> fn) {
  auto timer = std::make_shared<asio::steady_timer>(impl_->io, std::chrono::milliseconds(delay_ms));
  timer->async_wait([timer, fn = std::move(fn)](const asio::error_code&) { fn(); });
}

void io_runtime::start_thread() {
  if (impl_->thread.joinable())
    return;
  impl_->io.restart();
  impl_->guard.emplace(impl_->io.get_executor());
  impl_->thread = std::thread([this] { impl_->io.run(); });
}

void io_runtime::stop() {
  impl_->guard.reset();
  if (impl_->thread.joinable()) {
    impl_->io.stop();
    impl_->thread.join();
  }
}

void io_runtime::run_until_idle() {
  impl_->io.restart();
  impl_->io.run();
}

} // namespace gtmesh::agents
