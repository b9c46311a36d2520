"""Run (inside Trellis) and NoOpRun (outside): what a training script calls."""

import contextlib
import os
import resource
import sys
import time

_perf_ns = time.perf_counter_ns
_wall_ns = time.time_ns

MAX_SPANS_PER_STEP = 4096
MAX_TEXT = 4000  # characters of an event message or a Goodbye reason


def _warn(text):
    print("trellis_telemetry: " + text, file=sys.stderr)


def _number(value):
    """A python number from a float, an int, a 0-d tensor or a numpy scalar."""
    if value.__class__ is float or value.__class__ is int:
        return value
    item = getattr(value, "item", None)
    if item is not None:
        return item()
    return float(value)


class RankInfo:
    """What the launcher tells every process (torchrun-style variables and Trellis's)."""

    def __init__(self, environ):
        def integer(name, default):
            text = environ.get(name, "")
            try:
                return int(text) if text.strip() else default
            except ValueError:
                _warn("%s=%r is not an integer; using %d" % (name, text, default))
                return default
        def first(names, default):
            # torchrun's variables, else Slurm's (srun), else Open MPI's (mpirun): a job Trellis did
            # not launch has whichever its launcher set.
            for name in names:
                if environ.get(name, "").strip():
                    return integer(name, default)
            return default
        self.rank = first(("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"), 0)
        self.world_size = first(("WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE"), 1)
        self.local_rank = first(("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"), 0)
        self.local_world_size = first(("LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"), 1)
        self.restart_count = integer("TRELLIS_RESTART_COUNT", 0)
        self.checkpoint_dir = environ.get("TRELLIS_CHECKPOINT_DIR") or None
        self.run_id = environ.get("TRELLIS_RUN_ID", "")


def _take_rank_info(run, info):
    """The attributes every run has, real or no-op: who the rank is, and what it reported last."""
    run.rank = info.rank
    run.world_size = info.world_size
    run.local_rank = info.local_rank
    run.local_world_size = info.local_world_size
    run.restart_count = info.restart_count
    run.checkpoint_dir = info.checkpoint_dir
    run.run_id = info.run_id
    run.last_step = 0     # the last step reported
    run.last_extra = {}   # step()'s extra named numbers (not transmitted: no field in protocol 3)
    run.parameters = 0


class NoOpRun:
    """What init() returns outside Trellis: every method does nothing and never raises."""

    active = False
    _null = contextlib.nullcontext()

    def __init__(self, info=None):
        _take_rank_info(self, info or RankInfo(os.environ))

    def step(self, *args, **kwargs):
        pass

    def phase(self, name):
        return self._null

    def event(self, *args, **kwargs):
        pass

    def checkpoint_saved(self, *args, **kwargs):
        pass

    def watch(self, model):
        return model

    def close(self, *args, **kwargs):
        pass

    def stats(self):
        return {"sent": 0, "resent": 0, "held": 0, "dropped": 0, "seq": 0}

    def __repr__(self):
        return "<trellis_telemetry.NoOpRun rank %d>" % self.rank


class _Phase:
    """`with run.phase(name):` — a Span, the heartbeat's phase, optionally a CUDA event pair."""
    __slots__ = ("run", "name", "prev", "start", "events")

    def __init__(self, run, name):
        self.run = run
        self.name = name

    def __enter__(self):
        run = self.run
        self.prev = run._phase
        run._phase = self.name
        run._phase_depth += 1
        self.events = run._cuda_event_start() if run._cuda_events else None
        self.start = _wall_ns()
        return self

    def __exit__(self, *exc):
        end = _wall_ns()
        run = self.run
        run._phase_depth -= 1
        run._phase = self.prev if self.prev != "init" or not run.steps_reported else "train"
        if run._closed:
            return False
        if len(run._spans) < MAX_SPANS_PER_STEP:
            run._spans.append((self.name, self.start, end))
        if self.events is not None:
            try:
                self.events[1].record()
                run._gpu_spans.append((self.name, self.start, self.events[0], self.events[1]))
            except Exception:
                pass
        return False


def _same(envelope):
    return envelope


# Envelopes built on the telemetry thread from what step() collected.

def _build_collective(arg):
    from . import telemetry_pb2 as pb
    from ._collectives import bus_factor
    step, (group, op), (nbytes, ns, count, size) = arg
    e = pb.Envelope()
    c = e.collective
    c.step = step
    c.group = group
    c.op = op
    c.bytes = nbytes
    ms = ns / 1e6
    c.ms = ms
    c.count = count
    # algorithm bandwidth (GB/s) times the op's bus factor, as the C++ trainer reports it
    c.bus_gbps = nbytes / (ms * 1e6) * bus_factor(op, size) if ms > 0 else 0.0
    return e


def _build_spans(arg):
    from . import telemetry_pb2 as pb
    step, spans = arg
    e = pb.Envelope()
    batch = e.spans
    batch.step = step
    for name, start, end in spans:
        s = batch.spans.add()
        s.name = name
        s.start_ns = start
        s.end_ns = end
        s.micro_batch = -1
        s.stage = 0
    return e


def _build_report(arg):
    from . import telemetry_pb2 as pb
    step, step_ms, comm_ms, exposed_ms, loss, tokens, grad_norm, lr, total_steps, cuda_peak = arg
    e = pb.Envelope()
    r = e.step
    r.step = step
    r.step_ms = step_ms
    r.comm_ms = comm_ms
    r.comm_exposed_ms = exposed_ms
    r.compute_ms = max(0.0, step_ms - exposed_ms)
    if loss is not None:
        r.loss = loss
    if tokens is not None:
        r.tokens = tokens
        if step_ms > 0:
            r.tokens_per_s = tokens / (step_ms / 1000.0)
    if grad_norm is not None:
        r.grad_norm = grad_norm
    if lr is not None:
        r.lr = lr
    if total_steps is not None:
        r.total_steps = total_steps
    # peak memory: CUDA's allocator peak when CUDA is in use, else the process's peak RSS (read
    # here: it only grows, and the read costs the training thread nothing)
    r.memory.peak_rss = cuda_peak if cuda_peak is not None else \
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    return e


_EVENT_KINDS = ("info", "checkpoint", "failure", "restart", "non_finite", "straggler")  # Event.Kind order


class Run:
    """A rank's telemetry inside Trellis. Methods are for the training thread; none raises because
    the supervisor is gone, and none waits for the network (close() waits up to 3 s for acks)."""

    active = True

    def __init__(self, info, publisher_factory, tracker=None, precision="", cuda_events=False, model=None,
                 relay_name=""):
        from . import telemetry_pb2 as pb
        self._relay_name = relay_name  # its node's relay ("node8"), for the supervisor's hang detector
        from . import __version__
        self._pb = pb
        self._version = __version__
        _take_rank_info(self, info)
        self.steps_reported = 0
        self.precision = precision or ""
        self._tracker = tracker
        self._phase = "init"
        self._phase_depth = 0
        self._spans = []
        self._gpu_spans = []
        self._cuda_events = bool(cuda_events)
        self._closed = False
        self._warned = set()
        self._pid = os.getpid()
        self._last_step_ns = _perf_ns()
        if model is not None:
            self.watch(model)
        self._device = self._device_name()
        self._hello_refresh = False
        self._publisher = publisher_factory(self._heartbeat_fields)
        self._publisher.publish_envelopes([self._hello()])  # Hello is the first message
        self._publisher.start()

    def __repr__(self):
        return "<trellis_telemetry.Run %s rank %d/%d>" % (self.run_id, self.rank, self.world_size)

    # --- what the telemetry thread reads ----------------------------------------------------

    def _heartbeat_fields(self):
        tracker = self._tracker
        collective = tracker.oldest() if tracker is not None else None
        if collective is not None:  # with the group's members, for a group no plan names
            collective = tuple(collective) + (tracker.members(collective[0]),)
        if self._closed:
            phase = "done"
        elif tracker is not None and tracker.blocking > 0:
            phase = "comm"
        else:
            phase = self._phase
        return self.last_step, phase, collective

    # --- Hello --------------------------------------------------------------------------------

    @staticmethod
    def _device_name():
        torch = sys.modules.get("torch")
        try:
            if torch is not None and torch.cuda.is_initialized():  # never initialises CUDA itself
                index = torch.cuda.current_device()
                return "cuda:%d %s" % (index, torch.cuda.get_device_name(index))
        except Exception:
            pass
        return "cpu"

    def _hello(self):
        import socket
        pb = self._pb
        e = pb.Envelope()
        h = e.hello
        h.host = socket.gethostname()
        h.pid = os.getpid()
        h.device = self._device
        h.world_size = max(0, self.world_size)
        h.coords.dp = max(0, self.rank)
        torch = sys.modules.get("torch")
        script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "-"
        parts = ["python " + script]
        if torch is not None:
            parts.append("torch " + str(getattr(torch, "__version__", "?")))
            try:
                h.threads = torch.get_num_threads()
            except Exception:
                pass
        parts.append("trellis_telemetry " + self._version)
        h.trainer_version = " · ".join(parts)
        h.parameters = self.parameters
        h.precision = self.precision
        h.relay = self._relay_name
        return e

    def watch(self, model):
        """Records the model's parameter count for Hello (sent again at the first step when this is
        called after init() and before the first step). Returns the model."""
        try:
            self.parameters = int(sum(p.numel() for p in model.parameters()))
            if self.steps_reported == 0 and getattr(self, "_publisher", None) is not None:
                self._hello_refresh = True
        except Exception as e:
            self._warn_once("watch", "watch() could not count the parameters: %r" % (e,))
        return model

    # --- steps --------------------------------------------------------------------------------

    def _warn_once(self, key, text):
        if key not in self._warned:
            self._warned.add(key)
            _warn(text)

    def _cuda_event_start(self):
        torch = sys.modules.get("torch")
        try:
            if torch is not None and torch.cuda.is_initialized():
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                return start, end
        except Exception:
            pass
        return None

    def _resolve_gpu_spans(self):
        # Not testable without a GPU: a span "<phase>:gpu" starting with the host span and lasting
        # the GPU time between the two events.
        pending, self._gpu_spans = self._gpu_spans, []
        for name, start_ns, begin, end in pending:
            try:
                end.synchronize()
                ms = begin.elapsed_time(end)
                self._spans.append((name + ":gpu", start_ns, start_ns + int(ms * 1e6)))
            except Exception:
                pass

    def step(self, step, loss=None, tokens=None, grad_norm=None, lr=None, total_steps=None, **extra):
        """Reports a finished step (1-based). The step time is measured here: since the previous
        step() (or init()). `extra` named numbers are kept in `last_extra`, not transmitted."""
        if self._closed:
            return
        now = _perf_ns()
        try:
            step_ms = (now - self._last_step_ns) / 1e6
            self._last_step_ns = now
            step = int(_number(step))
            entries = []
            if self.steps_reported == 0:
                device = self._device_name()
                if self._hello_refresh or device != self._device:  # watch(), or CUDA initialised since
                    self._hello_refresh = False
                    self._device = device
                    entries.append((_same, self._hello()))
            comm_ns = exposed_ns = 0
            tracker = self._tracker
            if tracker is not None:
                stats, comm_ns, exposed_ns = tracker.take_step()
                for key, figures in stats.items():
                    entries.append((_build_collective, (step, key, figures)))
            if self._gpu_spans:
                self._resolve_gpu_spans()
            if self._spans:
                entries.append((_build_spans, (step, self._spans)))
                self._spans = []
            torch = sys.modules.get("torch")
            cuda_peak = None
            if torch is not None and torch.cuda.is_initialized():
                cuda_peak = torch.cuda.max_memory_allocated()
            entries.append((_build_report, (
                step, step_ms, comm_ns / 1e6, exposed_ns / 1e6,
                None if loss is None else _number(loss),
                None if tokens is None else int(_number(tokens)),
                None if grad_norm is None else _number(grad_norm),
                None if lr is None else _number(lr),
                None if total_steps is None else int(_number(total_steps)),
                cuda_peak)))
            self._publisher.publish(entries)
            self.last_step = step
            self.steps_reported += 1
            if self._phase_depth == 0:
                self._phase = "train"
            if extra:
                self.last_extra = {k: _number(v) for k, v in extra.items()}
        except Exception as e:  # a bad argument must not stop training
            self._warn_once("step", "step() could not report step %r: %r" % (step, e))

    def phase(self, name):
        """`with run.phase("forward"):` times a phase (a Span) and names it in heartbeats."""
        return _Phase(self, str(name))

    def event(self, kind, text, step=None):
        """An Event: kind is info, checkpoint, failure, restart, non_finite or straggler (another
        kind is sent as info, its name in the text)."""
        if self._closed:
            return
        try:
            pb = self._pb
            name = str(kind).lower()
            text = str(text)
            if name in _EVENT_KINDS:
                value = _EVENT_KINDS.index(name)
            elif isinstance(kind, int) and 0 <= kind < len(_EVENT_KINDS):  # an Event.Kind value
                value = int(kind)
            else:
                value = 0
                text = "[%s] %s" % (kind, text)
            e = pb.Envelope()
            ev = e.event
            ev.kind = value
            ev.step = self.last_step if step is None else int(_number(step))
            ev.message = text[:MAX_TEXT]
            self._publisher.publish_envelopes([e])
        except Exception as e:
            self._warn_once("event", "event() could not report: %r" % (e,))

    def checkpoint_saved(self, step, text=None):
        """An Event of kind checkpoint for `step` (the supervisor counts the checkpoint)."""
        self.event("checkpoint", text if text is not None else "checkpoint saved at step %d" % int(_number(step)),
                   step=step)

    def close(self, exit_code=0, reason=""):
        """Goodbye (exit_code, reason, steps_done), then up to 3 s for the acknowledgements."""
        if self._closed:
            return
        self._closed = True
        if self._tracker is not None:
            self._tracker.enabled = False
        if os.getpid() != self._pid:
            return  # a forked child: the parent's rank reports
        try:
            pb = self._pb
            e = pb.Envelope()
            g = e.goodbye
            g.exit_code = int(exit_code)
            g.reason = str(reason)[:MAX_TEXT]
            g.steps_done = self.last_step
            self._publisher.close(e)
        except Exception as e:
            self._warn_once("close", "close() failed: %r" % (e,))

    @property
    def closed(self):
        return self._closed

    def stats(self):
        """Counters of the sender: sent, resent, held (unacknowledged), dropped, seq (next number)."""
        p = self._publisher
        return {"sent": p.sent, "resent": p.resent, "held": p.held, "dropped": p.dropped, "seq": p._seq}

    def _forked(self):
        # In a forked child (a DataLoader worker): the thread is not there; report nothing.
        self._closed = True
        if self._tracker is not None:
            self._tracker.enabled = False
