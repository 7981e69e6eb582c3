# A private one-node Slurm cluster on 127.0.0.1 for the cluster suite (sourced, not run).
#   cluster_start   every file in a fresh temp dir ($KOPT_CLUSTER_DIR), free ports, auth/none (no munged),
#                   no cgroup touched; exports SLURM_CONF; returns non-zero with the reason on stderr.
#   cluster_stop    cancels every job and waits for the queue to drain, then stops slurmd and slurmctld by
#                   pid (TERM, KILL after a deadline), kills stray job steps found by their open files in
#                   the temp dir, removes it. Safe to call twice and after a failed start.
# Facts behind the choices (MinJobAge, order of teardown, pitfalls): ../shared/slurm.md of the team.

KOPT_CLUSTER_NODE=n1
KOPT_CLUSTER_PARTITION=debug

_cl_say() { echo "[cluster] $*" >&2; }

_cl_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Waits up to $1 tenths of a second for the command "$2…" to succeed.
_cl_wait() {
  local n=$1; shift
  for _ in $(seq 1 "$n"); do "$@" && return 0; sleep 0.1; done
  return 1
}

_cl_node_idle() { [ "$(sinfo -h -N -o %T 2>/dev/null)" = idle ]; }

cluster_start() {
  local w cpus
  w=$(mktemp -d "${TMPDIR:-/tmp}/kopt-slurm-XXXXXX") || return 1
  KOPT_CLUSTER_DIR=$w
  export KOPT_CLUSTER_DIR
  chmod 755 "$w"
  mkdir -p "$w"/{state,spool,log,out}
  chmod 1777 "$w/out"
  cpus=$(nproc)
  local cport dport
  cport=$(_cl_free_port) && dport=$(_cl_free_port) || { _cl_say "no free port"; return 1; }
  # Two ports picked apart could still collide; pick again once.
  [ "$cport" != "$dport" ] || dport=$(_cl_free_port)
  cat > "$w/slurm.conf" <<CONF
ClusterName=kopt
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$cport
SlurmdPort=$dport
SlurmUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$w/state
SlurmdSpoolDir=$w/spool
SlurmctldPidFile=$w/slurmctld.pid
SlurmdPidFile=$w/slurmd.pid
SlurmctldLogFile=$w/log/slurmctld.log
SlurmdLogFile=$w/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
MinJobAge=5
NodeName=$KOPT_CLUSTER_NODE NodeAddr=127.0.0.1 NodeHostname=localhost CPUs=$cpus State=UNKNOWN
PartitionName=$KOPT_CLUSTER_PARTITION Nodes=$KOPT_CLUSTER_NODE Default=YES MaxTime=INFINITE State=UP
CONF
  chmod 644 "$w/slurm.conf"
  export SLURM_CONF=$w/slurm.conf
  # setsid: the daemons get a session of their own, so a `timeout` around the suite (which signals its
  # process group) cannot kill them behind cluster_stop's back; they are stopped by pid instead.
  setsid /usr/sbin/slurmctld -D -f "$SLURM_CONF" > "$w/log/slurmctld.out" 2>&1 < /dev/null &
  echo $! > "$w/ctld.pid"
  setsid /usr/sbin/slurmd -D -N "$KOPT_CLUSTER_NODE" -f "$SLURM_CONF" > "$w/log/slurmd.out" 2>&1 < /dev/null &
  echo $! > "$w/d.pid"
  if ! _cl_wait 300 _cl_node_idle; then
    _cl_say "the node did not become idle within 30 s; sinfo: $(sinfo -h -N -o '%N %T' 2>&1 | head -3)"
    tail -n 5 "$w/log/slurmctld.log" "$w/log/slurmd.log" >&2 2>/dev/null
    return 1
  fi
}

# A pid counts as gone once it has exited, even while it waits as a zombie for this shell to reap it.
_cl_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

# Stops pid $1 with TERM, then KILL after ~5 s (slurmd can ignore TERM while it retries registration).
_cl_stop_pid() {
  local p=$1
  _cl_alive "$p" || return 0
  kill -TERM "$p" 2>/dev/null
  _cl_wait 50 eval "! _cl_alive $p" && return 0
  kill -KILL "$p" 2>/dev/null
  _cl_wait 20 eval "! _cl_alive $p"
}

# Pids of processes holding an open file under the cluster's dir (orphaned slurmstepd and the like).
_cl_holders() {
  # find reads the fd links itself (one process, not one readlink per fd: seconds, not a minute).
  # From /: find keeps a descriptor on its start directory, which would count itself.
  (cd / && find /proc/[0-9]*/fd -maxdepth 1 -lname "$KOPT_CLUSTER_DIR/*" 2>/dev/null) | cut -d/ -f3 | sort -u
}

cluster_stop() {
  local w=${KOPT_CLUSTER_DIR:-}
  [ -n "$w" ] && [ -d "$w" ] || return 0
  if _cl_alive "$(cat "$w/ctld.pid" 2>/dev/null)"; then
    scancel -p "$KOPT_CLUSTER_PARTITION" 2>/dev/null
    _cl_wait 100 eval '[ -z "$(squeue -h 2>/dev/null)" ]' || _cl_say "jobs still queued after scancel: $(squeue -h 2>&1 | head -3)"
  fi
  # Both at once: each takes 1-2 s to go.
  local s1 s2 p
  _cl_stop_pid "$(cat "$w/d.pid" 2>/dev/null)" & s1=$!
  _cl_stop_pid "$(cat "$w/ctld.pid" 2>/dev/null)" & s2=$!
  wait "$s1" "$s2"
  for p in $(_cl_holders); do
    [ "$p" = $$ ] || [ ! -e "/proc/$p" ] && continue
    _cl_say "killing leftover process $p ($(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | cut -c1-80))"
    kill -KILL "$p" 2>/dev/null
  done
  rm -rf "$w"
  unset KOPT_CLUSTER_DIR
}
