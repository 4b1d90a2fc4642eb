#include "engine/sched/engine_stats.h"

#include "engine/sched/scheduler.h"

namespace kvgate {

EngineStats read_engine_stats(const Scheduler& s) {
  EngineStats st;
  st.cache = s.pool().stats();
  st.running = static_cast<int64_t>(s.running());
  st.policy = s.pool().policy().name();
  st.restores = s.restores();
  if (s.mover()) st.mover = s.mover()->stats();
  return st;
}

}  // namespace kvgate
