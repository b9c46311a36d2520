"""Joining a collector: a job Trellis did not launch reports to ``trellis-cli collect``.

With TRELLIS_COLLECTOR (tcp://HOST:PORT) and TRELLIS_COLLECTOR_KEYS (a 0600 key file the collector
wrote) in the environment and no TRELLIS_TELEMETRY_ENDPOINT, init() asks the collector once which
run this job's telemetry belongs to (a Join over a ZeroMQ REQ socket, CURVE-encrypted with the key
file's client keys) and then reports there as a launched rank does. The job is named by
TRELLIS_JOB_NAME, else SLURM_JOB_NAME, else the script; told apart from other jobs of that name by
TRELLIS_JOB_ID, else SLURM_JOB_ID, else torchrun's run id, else MASTER_ADDR:MASTER_PORT, else
mpirun's job (as backend/protocol/collector_join.cpp does for trellis-trainer).
"""

import os
import socket
import sys

JOIN_TIMEOUT_MS = 5000


def job_identity(environ, fallback_name):
    """(job_name, job_id, scheduler, attempt) from the launcher's variables."""
    def get(name):
        value = environ.get(name, "").strip()
        return value or None

    name = get("TRELLIS_JOB_NAME") or get("SLURM_JOB_NAME") or fallback_name
    job_id, scheduler = "", ""
    if get("TRELLIS_JOB_ID"):
        job_id = get("TRELLIS_JOB_ID")
    elif get("SLURM_JOB_ID"):
        job_id, scheduler = get("SLURM_JOB_ID"), "slurm"
    elif get("TORCHELASTIC_RUN_ID") and get("TORCHELASTIC_RUN_ID") != "none":
        job_id, scheduler = get("TORCHELASTIC_RUN_ID"), "torchrun"
    elif get("MASTER_ADDR") and get("MASTER_PORT"):
        job_id, scheduler = "%s:%s" % (get("MASTER_ADDR"), get("MASTER_PORT")), "torchrun"
    elif get("PMIX_NAMESPACE"):
        job_id, scheduler = get("PMIX_NAMESPACE"), "mpirun"
    elif get("OMPI_MCA_ess_base_jobid"):
        job_id, scheduler = get("OMPI_MCA_ess_base_jobid"), "mpirun"
    attempt = 0
    for variable in ("TRELLIS_RESTART_COUNT", "SLURM_RESTART_COUNT", "TORCHELASTIC_RESTART_COUNT"):
        if get(variable):
            try:
                attempt = max(0, int(get(variable)))
            except ValueError:
                pass
            break
    return name, job_id, scheduler, attempt


def join(environ, info, client):
    """(endpoint, run_id, curve keys) for this rank, or None after saying on stderr why not."""
    from ._keys import TelemetryKeyError, client_keys
    from . import telemetry_pb2 as pb
    import zmq

    address = environ.get("TRELLIS_COLLECTOR", "").strip()
    keys_path = environ.get("TRELLIS_COLLECTOR_KEYS", "").strip()

    def refuse(why):
        print("trellis_telemetry: rank %d: not reporting to a collector: %s" % (info.rank, why), file=sys.stderr)
        return None

    if not keys_path:
        return refuse("TRELLIS_COLLECTOR is set but TRELLIS_COLLECTOR_KEYS (the collector's key file for jobs) is not")
    try:
        server_public, client_public, client_secret = client_keys(keys_path)
    except TelemetryKeyError as e:
        return refuse(str(e))
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
    name, job_id, scheduler, attempt = job_identity(environ, os.path.splitext(script)[0] or "python")
    request = pb.Join(protocol_version=3, job_name=name, job_id=job_id, scheduler=scheduler,
                      world_size=max(1, info.world_size), rank=max(0, info.rank), attempt=attempt,
                      host=socket.gethostname(), pid=os.getpid(),
                      command=" ".join([sys.executable] + sys.argv)[:4096], client=client)
    context = zmq.Context.instance()
    sock = context.socket(zmq.REQ)
    try:
        sock.setsockopt(zmq.LINGER, 0)
        sock.curve_serverkey = server_public
        sock.curve_publickey = client_public
        sock.curve_secretkey = client_secret
        sock.connect(address)
        sock.send(request.SerializeToString())
        if not sock.poll(JOIN_TIMEOUT_MS):
            return refuse("no answer from the collector at %s within %d s (is it running, is the address right, and is "
                          "this the key file it gave out? a wrong key is refused without an answer)"
                          % (address, JOIN_TIMEOUT_MS // 1000))
        reply = pb.JoinReply()
        try:
            reply.ParseFromString(sock.recv())
        except Exception:
            return refuse("the collector at %s sent an answer that is not a JoinReply" % address)
        if reply.error:
            return refuse("the collector refused this rank: %s" % reply.error)
        if not reply.run_id or not reply.endpoint.startswith("tcp://"):
            return refuse("the collector at %s answered without a run id or a tcp:// endpoint" % address)
        return reply.endpoint, reply.run_id, (server_public, client_public, client_secret)
    except zmq.ZMQError as e:
        return refuse("cannot reach the collector at %s: %s" % (address, e))
    finally:
        sock.close(0)
