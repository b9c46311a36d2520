"""Tracks torch.distributed collectives for the step report and the heartbeat.

install() wraps the public collective functions of torch.distributed (both the torch.distributed
and the torch.distributed.distributed_c10d attributes; code that bound a function by name before
init() keeps the original) and DistributedDataParallel, whose bucket all-reduces come from the C++
reducer: every DDP model built after install() gets, through the original register_comm_hook, a
trampoline hook that calls the default allreduce hook (or the hook the user registers later) and
tracks it.

Each tracked call has a group name ("world" for the default group; "group<k>" for others, k being
c10d's creation number of the group where torch has one — the same on every rank, since every rank
must create groups in the same order — else its order of first use here; point-to-point calls use
"p2p"), an op name, a call number per group (1-based, every tracked call on that group in order, so
the same call has the same number on every member), its bytes and its start. The hang detector
only knows the members of "world" (and of the plan's own dp/tp/... groups): a wait in "group<k>"
is shown but not attributed to the missing members.

Threading: calls are tracked on the thread that makes them; DDP bucket completions arrive on the
backend's threads; the telemetry thread reads the oldest call in flight. Everything shared is
guarded by one lock held for a few dictionary operations.
"""

import functools
import inspect
import itertools
import threading
import time

_perf_ns = time.perf_counter_ns
_wall_ns = time.time_ns
_tls = threading.local()  # depth: inside a tracked call (nested calls are not tracked again)

_tracker = None      # the installed Tracker
_saved = []          # (owner, attribute, original) to restore on uninstall()


def bus_factor(op, n):
    """Bus bandwidth factor, as busBandwidthFactor in backend/trainer/comm/mpi_communicator.cpp."""
    if n <= 1:
        return 1.0
    if op == "all_reduce":
        return 2.0 * (n - 1) / n
    if op in ("reduce_scatter", "all_gather", "all_to_all"):
        return (n - 1) / n
    return 1.0  # broadcast, reduce, send/recv, ...


def tensor_bytes(value):
    """numel × element_size of a tensor, or summed over a list/tuple of tensors; 0 otherwise."""
    if value is None:
        return 0
    if isinstance(value, (list, tuple)):
        total = 0
        for v in value:
            numel = getattr(v, "numel", None)
            if numel is not None:
                total += numel() * v.element_size()
        return total
    numel = getattr(value, "numel", None)
    if numel is None:
        return 0
    return numel() * value.element_size()


class Tracker:
    # A call in flight is a list: [group, op, call, bytes, since_ns (wall), t0 (perf ns), group size]
    def __init__(self):
        self.enabled = True
        self._lock = threading.Lock()
        self._inflight = {}   # id(call) -> call, in start order
        self._calls = {}      # group name -> itertools.count(1)
        self.blocking = 0     # the training thread waits in a collective (synchronous call or wait())
        self._groups = {}     # group object -> (name, size)
        self._members = {}    # group name -> its members' world ranks, in group order (torch's own groups)
        self._first_use = itertools.count(1)
        self._world_size = None
        self._reset_step()

    def _reset_step(self):
        self._stats = {}      # (group, op) -> [bytes, ns, count, size]
        self._comm_ns = 0
        self._exposed_ns = 0
        self._async_issue = 0  # perf ns of the last DDP bucket issued this step
        self._async_done = 0   # perf ns of the last DDP bucket completed this step

    # --- names -----------------------------------------------------------------------------

    def world_size(self):
        if self._world_size is None:
            try:
                import torch.distributed as dist
                if dist.is_initialized():
                    self._world_size = dist.get_world_size()
            except Exception:
                pass
        return self._world_size or 1

    def group_info(self, group):
        """(name, size) of a process group (None: the default group)."""
        if group is None:
            return "world", self.world_size()
        try:
            info = self._groups.get(group)
        except TypeError:
            info = None
        if info is None:
            info = self._resolve(group)
            try:
                self._groups[group] = info
            except TypeError:
                pass
        return info

    def _resolve(self, group):
        import torch.distributed.distributed_c10d as c10d
        default = None
        try:
            default = c10d._get_default_group()
        except Exception:
            pass
        if group is default or group is getattr(c10d.GroupMember, "WORLD", None):
            return "world", self.world_size()
        name = None
        names = getattr(c10d, "_pg_names", None)
        if names is None:
            names = getattr(getattr(c10d, "_world", None), "pg_names", None)
        try:
            name = names.get(group) if names is not None else None
        except Exception:
            name = None
        label = "group" + name if isinstance(name, str) and name.isdigit() else "group%d" % next(self._first_use)
        members = self._world_ranks(c10d, group)
        if members:
            self._members[label] = members
        try:
            size = group.size()
        except Exception:
            try:
                size = c10d.get_world_size(group)
            except Exception:
                size = 1
        return label, size

    @staticmethod
    def _world_ranks(c10d, group):
        """The group's members as world ranks, in group order; [] when torch does not say."""
        try:
            ranks = getattr(c10d, "get_process_group_ranks", None)
            if ranks is not None:  # torch 2
                return [int(r) for r in ranks(group)]
            mapping = c10d._pg_group_ranks[group]  # torch 1.13: world rank -> group rank
            return [int(r) for r in sorted(mapping, key=mapping.get)]
        except Exception:
            return []

    def members(self, name):
        """The world ranks of a group this tracker resolved (torch's own groups); () when unknown."""
        return tuple(self._members.get(name, ()))

    # --- calls -----------------------------------------------------------------------------

    def begin(self, group, op, nbytes, size, blocking, ddp=False):
        call = [group, op, 0, nbytes, _wall_ns(), 0, size]
        with self._lock:
            counter = self._calls.get(group)
            if counter is None:
                counter = self._calls[group] = itertools.count(1)
            call[2] = next(counter)
            self._inflight[id(call)] = call
            if blocking:
                self.blocking += 1
            call[5] = t0 = _perf_ns()
            if ddp:
                self._async_issue = t0
        return call

    def end(self, call, blocking, exposed_ns=None, ddp=False):
        """The call finished; exposed_ns: how long the training thread waited for it (None: all of it)."""
        now = _perf_ns()
        with self._lock:
            if self._inflight.pop(id(call), None) is None:
                return  # already finished (or given up)
            if blocking:
                self.blocking -= 1
            ns = now - call[5]
            key = (call[0], call[1])
            s = self._stats.get(key)
            if s is None:
                self._stats[key] = [call[3], ns, 1, call[6]]
            else:
                s[0] += call[3]
                s[1] += ns
                s[2] += 1
            self._comm_ns += ns
            if ddp:
                if now > self._async_done:
                    self._async_done = now
            else:
                self._exposed_ns += ns if exposed_ns is None else exposed_ns

    def abort(self, call, blocking):
        """The call failed or its handle was dropped unfinished: no longer in flight, not counted."""
        with self._lock:
            if self._inflight.pop(id(call), None) is not None and blocking:
                self.blocking -= 1

    def wait_begin(self):
        with self._lock:
            self.blocking += 1

    def wait_end(self):
        with self._lock:
            self.blocking -= 1

    def take_step(self):
        """This step's {(group, op): [bytes, ns, count, size]}, comm ns and exposed ns; starts the next."""
        with self._lock:
            stats, comm, exposed = self._stats, self._comm_ns, self._exposed_ns
            # DDP's buckets run while backward computes: the training thread only waits for what
            # is left after the last bucket was issued.
            if self._async_issue and self._async_done > self._async_issue:
                exposed += self._async_done - self._async_issue
            self._reset_step()
        return stats, comm, exposed

    def oldest(self):
        """(group, op, call, bytes, since_ns) of the oldest call in flight, or None."""
        with self._lock:
            for call in self._inflight.values():
                return call[0], call[1], call[2], call[3], call[4]
        return None


class _Pending:
    """Several handles of one tracked call (batch_isend_irecv): it ends when all are waited."""
    __slots__ = ("left", "exposed")

    def __init__(self, n):
        self.left = n
        self.exposed = 0


class TrackedWork:
    """A thin proxy of a torch.distributed Work whose wait() (or future) records the completion."""
    __slots__ = ("_work", "_call", "_tracker", "_pending", "_done")

    def __init__(self, work, call, tracker, pending=None):
        self._work = work
        self._call = call
        self._tracker = tracker
        self._pending = pending
        self._done = False

    def _finish(self, waited_ns):
        tracker = self._tracker
        with tracker._lock:
            if self._done:
                return
            self._done = True
            pending = self._pending
            if pending is not None:
                pending.exposed += waited_ns
                pending.left -= 1
                if pending.left > 0:
                    return
                waited_ns = pending.exposed
        tracker.end(self._call, False, waited_ns)

    def wait(self, *args, **kwargs):
        if self._done:
            return self._work.wait(*args, **kwargs)
        tracker = self._tracker
        tracker.wait_begin()
        t0 = _perf_ns()
        try:
            result = self._work.wait(*args, **kwargs)
        finally:
            waited = _perf_ns() - t0
            tracker.wait_end()
        self._finish(waited)
        return result

    def is_completed(self):
        done = self._work.is_completed()
        if done and not self._done:
            self._finish(0)
        return done

    def get_future(self):
        fut = self._work.get_future()

        def completed(f, self=self):
            try:
                self._finish(0)
            except Exception:
                pass
            return f.value()
        return fut.then(completed)

    def __getattr__(self, name):
        return getattr(self._work, name)

    def __repr__(self):
        return "TrackedWork(%r)" % (self._work,)

    def __del__(self):
        try:
            if not self._done:
                self._tracker.abort(self._call, False)
        except Exception:
            pass


# --- wrappers of torch.distributed functions ------------------------------------------------

# name -> (op, parameters whose tensors count as the call's bytes, point-to-point)
# Bytes follow the C++ communicators (and nccl-tests): the whole buffer of the collective, i.e. the
# gathered output of an all-gather and the scattered input of a reduce-scatter.
SPECS = {
    "all_reduce": ("all_reduce", ("tensor",), False),
    "all_gather": ("all_gather", ("tensor_list",), False),
    "all_gather_into_tensor": ("all_gather", ("output_tensor",), False),
    "_all_gather_base": ("all_gather", ("output_tensor",), False),
    "reduce_scatter": ("reduce_scatter", ("input_list",), False),
    "reduce_scatter_tensor": ("reduce_scatter", ("input",), False),
    "_reduce_scatter_base": ("reduce_scatter", ("input",), False),
    "broadcast": ("broadcast", ("tensor",), False),
    "reduce": ("reduce", ("tensor",), False),
    "gather": ("gather", ("tensor",), False),
    "scatter": ("scatter", ("tensor",), False),
    "all_to_all": ("all_to_all", ("input_tensor_list",), False),
    "all_to_all_single": ("all_to_all", ("input",), False),
    "barrier": ("barrier", (), False),
    "send": ("send", ("tensor",), True),
    "recv": ("recv", ("tensor",), True),
    "isend": ("send", ("tensor",), True),
    "irecv": ("recv", ("tensor",), True),
    "batch_isend_irecv": ("batch_isend_irecv", (), True),
    "all_gather_object": ("all_gather_object", (), False),
    "broadcast_object_list": ("broadcast_object_list", (), False),
}
_ALWAYS_ASYNC = ("isend", "irecv", "batch_isend_irecv")


def _make_wrapper(name, original):
    op, tensor_params, p2p = SPECS[name]
    try:
        params = list(inspect.signature(original).parameters)
    except (TypeError, ValueError):
        return None
    group_at = params.index("group") if "group" in params else None
    async_at = params.index("async_op") if "async_op" in params else None
    tensors = tuple((params.index(p), p) for p in tensor_params if p in params)
    always_async = name in _ALWAYS_ASYNC
    batch = name == "batch_isend_irecv"
    import torch.distributed.distributed_c10d as c10d
    non_member = getattr(c10d.GroupMember, "NON_GROUP_MEMBER", None)

    def wrapper(*args, **kwargs):
        tracker = _tracker
        if tracker is None or not tracker.enabled or getattr(_tls, "depth", 0):
            return original(*args, **kwargs)
        try:
            n = len(args)
            if p2p:
                group_name, size = "p2p", 1
                if group_at is not None:
                    group = args[group_at] if group_at < n else kwargs.get("group")
                    if group is non_member and group is not None:
                        return original(*args, **kwargs)
            else:
                group = args[group_at] if group_at is not None and group_at < n else kwargs.get("group")
                if group is non_member and group is not None:
                    return original(*args, **kwargs)  # not a member: nothing happens here
                group_name, size = tracker.group_info(group)
            if batch:
                ops = args[0] if args else kwargs.get("p2p_op_list", ())
                nbytes = sum(tensor_bytes(getattr(p, "tensor", None)) for p in ops)
            else:
                nbytes = 0
                for at, pname in tensors:
                    nbytes += tensor_bytes(args[at] if at < n else kwargs.get(pname))
            if always_async:
                blocking = False
            elif async_at is not None:
                blocking = not (args[async_at] if async_at < n else kwargs.get("async_op", False))
            else:
                blocking = True
        except Exception:
            return original(*args, **kwargs)
        call = tracker.begin(group_name, op, nbytes, size, blocking)
        _tls.depth = 1
        try:
            result = original(*args, **kwargs)
        except BaseException:
            tracker.abort(call, blocking)
            raise
        finally:
            _tls.depth = 0
        if blocking:
            tracker.end(call, True)
            return result
        if result is None:
            tracker.abort(call, False)
            return result
        if batch:
            works = list(result)
            if not works:
                tracker.abort(call, False)
                return result
            pending = _Pending(len(works))
            return [TrackedWork(w, call, tracker, pending) for w in works]
        return TrackedWork(result, call, tracker)

    functools.update_wrapper(wrapper, original)
    wrapper.__trellis_original__ = original
    return wrapper


# --- DistributedDataParallel ----------------------------------------------------------------

class _DdpHookState:
    """The state of the trampoline hook of one DDP model: the hook it calls and how it tracks."""
    __slots__ = ("process_group", "hook", "state", "user_hook", "info")

    def __init__(self, process_group):
        self.process_group = process_group
        self.hook = None      # None: the default allreduce hook
        self.state = None
        self.user_hook = False
        self.info = None      # (group name, size), resolved at the first bucket

    def inner(self, bucket):
        if self.hook is None:
            from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
            return default_hooks.allreduce_hook(self.process_group, bucket)
        return self.hook(self.state, bucket)


def _trellis_comm_hook(state, bucket):
    """DDP communication hook installed by trellis_telemetry: tracks the bucket's all-reduce."""
    tracker = _tracker
    if tracker is None or not tracker.enabled or getattr(_tls, "depth", 0):
        return state.inner(bucket)
    try:
        buffer = bucket.buffer()
        nbytes = buffer.numel() * buffer.element_size()
        if state.info is None:
            state.info = tracker.group_info(state.process_group)
        group_name, size = state.info
    except Exception:
        return state.inner(bucket)
    call = tracker.begin(group_name, "all_reduce", nbytes, size, False, ddp=True)
    _tls.depth = 1
    try:
        fut = state.inner(bucket)
    except BaseException:
        tracker.abort(call, False)
        raise
    finally:
        _tls.depth = 0

    def completed(f):
        try:
            tracker.end(call, False, ddp=True)
        except Exception:
            pass
        return f.value()
    return fut.then(completed)


def _patch_ddp():
    try:
        from torch.nn.parallel import DistributedDataParallel as DDP
    except Exception:
        return
    if getattr(DDP.__init__, "__trellis_original__", None) is not None:
        return
    original_init = DDP.__init__
    original_register = DDP.register_comm_hook
    original_builtin = getattr(DDP, "_register_builtin_comm_hook", None)

    @functools.wraps(original_init)
    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        tracker = _tracker
        if tracker is None or not tracker.enabled:
            return
        try:
            state = _DdpHookState(getattr(self, "process_group", None))
            original_register(self, state, _trellis_comm_hook)
            self.__dict__["_trellis_hook"] = state
        except Exception:
            return  # a DDP without a reducer (or a newer torch that refuses): not tracked
        # torch 2.x also lists registered hooks for its Python reducer (compiled autograd), which
        # calls them with (grad, param) instead of a bucket: the trampoline stays out of that list,
        # so that path runs as if no hook were registered (untracked).
        hooks = getattr(self, "_comm_hooks", None)
        if isinstance(hooks, list):
            hooks[:] = [h for h in hooks if not (isinstance(h, tuple) and h and h[0] is _trellis_comm_hook)]
    __init__.__trellis_original__ = original_init

    @functools.wraps(original_register)
    def register_comm_hook(self, state, hook):
        trampoline = self.__dict__.get("_trellis_hook")
        if trampoline is None or trampoline.user_hook:
            return original_register(self, state, hook)  # (a second hook is refused there, as ever)
        # The model accepts only one hook, and the trampoline is it: the user's hook, validated as
        # DDP validates it, becomes the one the trampoline calls.
        self._check_comm_hook(hook)
        try:
            self.logger._set_comm_hook_name(getattr(hook, "__qualname__", repr(hook)))
        except Exception:
            pass
        hooks = getattr(self, "_comm_hooks", None)
        if isinstance(hooks, list):
            hooks.append((hook, state))
        trampoline.hook, trampoline.state, trampoline.user_hook = hook, state, True
    register_comm_hook.__trellis_original__ = original_register

    saved = [(DDP, "__init__", original_init), (DDP, "register_comm_hook", original_register)]
    DDP.__init__ = __init__
    DDP.register_comm_hook = register_comm_hook

    if original_builtin is not None:
        @functools.wraps(original_builtin)
        def _register_builtin_comm_hook(self, comm_hook_type):
            trampoline = self.__dict__.get("_trellis_hook")
            if trampoline is None or trampoline.user_hook:
                return original_builtin(self, comm_hook_type)
            import torch.distributed as dist
            from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
            hooks = {dist.BuiltinCommHookType.ALLREDUCE: default_hooks.allreduce_hook,
                     dist.BuiltinCommHookType.FP16_COMPRESS: default_hooks.fp16_compress_hook}
            hook = hooks.get(comm_hook_type)
            if hook is None:
                return original_builtin(self, comm_hook_type)
            try:
                self.logger._set_comm_hook_name(str(comm_hook_type))
            except Exception:
                pass
            trampoline.hook, trampoline.state, trampoline.user_hook = hook, self.process_group, True
        _register_builtin_comm_hook.__trellis_original__ = original_builtin
        saved.append((DDP, "_register_builtin_comm_hook", original_builtin))
        DDP._register_builtin_comm_hook = _register_builtin_comm_hook
    _saved.extend(saved)


def install(tracker):
    """Wraps torch.distributed's collectives and DDP; False when torch.distributed is missing."""
    global _tracker
    try:
        import torch.distributed as dist
        if not dist.is_available():
            return False
        import torch.distributed.distributed_c10d as c10d
    except Exception:
        return False
    _tracker = tracker
    if _saved:
        return True  # already installed: the new tracker is used
    wrappers = {}
    for name in SPECS:
        for owner in (dist, c10d):
            original = getattr(owner, name, None)
            if original is None or not callable(original):
                continue
            if getattr(original, "__trellis_original__", None) is not None:
                continue
            wrapper = wrappers.get(id(original))
            if wrapper is None:
                wrapper = _make_wrapper(name, original)
                if wrapper is None:
                    continue
                wrappers[id(original)] = wrapper
            _saved.append((owner, name, original))
            setattr(owner, name, wrapper)
    _patch_ddp()
    return True


def uninstall():
    """Restores what install() replaced (DDP models built meanwhile keep their trampoline)."""
    global _tracker
    _tracker = None
    while _saved:
        owner, name, original = _saved.pop()
        setattr(owner, name, original)


def installed():
    return bool(_saved)
