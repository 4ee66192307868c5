#pragma once

// A decider's IXFR journals (core/dns/transfer/journal_storage.hpp) in its
// RocksDB store, so that IXFR still sends a secondary only the changes
// after the decider restarts: its serial is the committed config version,
// the same after a restart, so the versions a journal holds stay true.
//
// The DNS TCP thread hands a journal over and goes on answering: a thread
// of this class writes it (the last one handed over per zone; a zone of
// 1,000,000 records is about 30 MB), so a write, or a commit of the
// decider's that holds the store meanwhile, never stalls TCP answers.
// Whatever is handed over is written before the destructor returns.

#include "core/dns/transfer/journal_storage.hpp"
#include "core/state/store.hpp"
#include "core/text/log.hpp"

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace gtmesh::decider {

class store_journals final : public dns::journal_storage {
public:
  explicit store_journals(state::store& store) : store_(store), writer_([this] { write_loop(); }) {}
  ~store_journals() override {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    writer_.join();
  }
  store_journals(const store_journals&) = delete;
  store_journals& operator=(const store_journals&) = delete;

  /// What was last handed over for `zone` when it is not written yet, else
  /// what the store holds.
  std::string load(std::span<const uint8_t> zone) override {
    const std::string k = key(zone);
    {
      const std::lock_guard lock(mutex_);
      if (auto it = pending_.find(k); it != pending_.end())
        return it->second;
      if (writing_ && writing_.key() == k)
        return writing_.mapped();
    }
    return store_.load_journal(k);
  }

  void save(std::span<const uint8_t> zone, std::string_view bytes) override {
    {
      const std::lock_guard lock(mutex_);
      pending_[key(zone)] = std::string(bytes);
    }
    wake_.notify_one();
  }

private:
  static std::string key(std::span<const uint8_t> zone) { return std::string(zone.begin(), zone.end()); }

  void write_loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
      if (pending_.empty())
        return; // stopping, and everything written
      writing_ = pending_.extract(pending_.begin());
      lock.unlock();
      std::string error;
      const bool written = store_.save_journal(writing_.key(), writing_.mapped(), error);
      if (!written)
        log_line(log_level::warn, "decider",
                 "an IXFR journal was not written (" + error + "): after a restart, IXFR sends that zone whole");
      lock.lock();
      writing_ = {};
    }
  }

  state::store& store_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, std::string> pending_; ///< zone -> the journal to write ("" deletes)
  std::map<std::string, std::string>::node_type writing_; ///< the one being written now (load() sees it)
  bool stopping_ = false;
  std::thread writer_; ///< last: started once the rest is ready
};

} // namespace gtmesh::decider
