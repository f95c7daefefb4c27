// Typed wrappers over liburcu's QSBR flavour, so that C++ code never touches its macros
// (they break on brace-initialised arguments). Readers are the worker lcores; the writer is the
// control core. Each function says which side may call it.
#pragma once

#ifndef _LGPL_SOURCE
#define _LGPL_SOURCE  // inline fast paths for quiescent state and dereference
#endif
#include <urcu/urcu-qsbr.h>

namespace sbc::dataplane::rcu {

/// Reader thread: call once before the first read-side access. Registered threads are online.
inline void register_thread() noexcept { urcu_qsbr_register_thread(); }
/// Reader thread: call once when it stops reading, before it exits.
inline void unregister_thread() noexcept { urcu_qsbr_unregister_thread(); }
/// Reader thread: "I hold no RCU-protected pointer now". Once per loop iteration, also on empty polls.
inline void quiescent_state() noexcept { urcu_qsbr_quiescent_state(); }
/// Reader thread: about to block or sleep for a while; writers need not wait for it.
inline void thread_offline() noexcept { urcu_qsbr_thread_offline(); }
inline void thread_online() noexcept { urcu_qsbr_thread_online(); }

/// Reader side: loads a published pointer with the ordering a reader needs (consume).
template <class T>
inline T* dereference(T* const& slot) noexcept
{
    T* p = rcu_dereference(slot);
    return p;
}

/// Writer side: publishes `fresh` and returns the previous object, which readers may still
/// hold until a grace period has passed (free it with defer_free or after synchronize).
template <class T>
inline T* exchange(T*& slot, T* fresh) noexcept
{
    T* old = rcu_xchg_pointer(&slot, fresh);
    return old;
}

/// Writer side: waits until every registered reader has passed a quiescent state.
/// A reader thread must not call it while online.
inline void synchronize() noexcept { urcu_qsbr_synchronize_rcu(); }

/// Writer side: runs `fn(head)` after a grace period, on liburcu's call_rcu thread.
inline void defer(rcu_head* head, void (*fn)(rcu_head*)) noexcept { urcu_qsbr_call_rcu(head, fn); }

/// Writer side: waits until every deferred callback queued so far has run (shutdown, tests).
inline void barrier() noexcept { urcu_qsbr_barrier(); }

}  // namespace sbc::dataplane::rcu
