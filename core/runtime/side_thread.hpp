#pragma once

// Work a loader or compiler hands to a second thread while it does the rest
// itself (the records of a big zone, a plan's name table): started if a
// thread can be had, else the caller does that work too; joined on every
// way out; what the work threw is rethrown by join().

#include <exception>
#include <system_error>
#include <thread>
#include <utility>

namespace gtmesh {

class side_thread {
public:
  template <class Work>
  explicit side_thread(Work&& work) {
    try {
      thread_ = std::jthread([this, w = std::forward<Work>(work)]() mutable {
        try {
          w();
        } catch (...) {
          failed_ = std::current_exception();
        }
      });
    } catch (const std::system_error&) {
      // No thread to be had (a limit reached): started() says so.
    }
  }
  side_thread(const side_thread&) = delete;
  side_thread& operator=(const side_thread&) = delete;

  /// The work runs on the second thread (else the caller must do it).
  bool started() const noexcept { return thread_.joinable(); }

  /// Waits for the work; rethrows what it threw.
  void join() {
    if (thread_.joinable())
      thread_.join();
    if (failed_)
      std::rethrow_exception(std::exchange(failed_, nullptr));
  }

private:
  std::exception_ptr failed_;
  std::jthread thread_; ///< last: joined before failed_ goes
};

} // namespace gtmesh
