# A single-node Slurm cluster for tests, in a directory of its own (sourced, not run):
#   slurm_cluster_start DIR CPUS   starts munged (own socket and key copy), slurmctld and slurmd
#                                  from DIR/slurm.conf on free ports; exports SLURM_CONF
#   slurm_cluster_stop             stops the daemons it started (by pid), nothing else
# Needs root, slurm-wlm, slurm-client and munge (Debian 12). Nothing is written outside DIR.
SLURM_CLUSTER_PIDS=()

slurm_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

slurm_cluster_start() {
  local dir=$1 cpus=${2:-4}
  local node
  node=$(hostname -s)
  chmod 755 "$dir"
  # munged wants its key private and its socket's directory searchable by all.
  install -d -m 700 -o munge -g munge "$dir/munge"
  install -d -m 755 -o munge -g munge "$dir/munge-socket"
  install -m 400 -o munge -g munge /etc/munge/munge.key "$dir/munge/munge.key"
  setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged -F \
    --socket="$dir/munge-socket/socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
    --seed-file="$dir/munge/seed" >"$dir/munged.out" 2>&1 &
  SLURM_CLUSTER_PIDS+=($!)
  install -d "$dir/state" "$dir/spool" "$dir/log"
  cat >"$dir/slurm.conf" <<CONF
ClusterName=servebench-test
SlurmctldHost=$node
SlurmctldPort=$(slurm_free_port)
SlurmdPort=$(slurm_free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge-socket/socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
PlugStackConfig=$dir/plugstack.conf
NodeName=$node CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=10 State=UP
CONF
  : >"$dir/plugstack.conf"
  export SLURM_CONF=$dir/slurm.conf
  local i
  for i in $(seq 1 50); do [ -S "$dir/munge-socket/socket" ] && break; sleep 0.1; done
  /usr/sbin/slurmctld -D -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
  SLURM_CLUSTER_PIDS+=($!)
  /usr/sbin/slurmd -D -f "$SLURM_CONF" >"$dir/slurmd.out" 2>&1 &
  SLURM_CLUSTER_PIDS+=($!)
  for i in $(seq 1 100); do
    if sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle; then return 0; fi
    sleep 0.2
  done
  echo "slurm_cluster_start: node $node not idle after 20 s; logs in $dir/log" >&2
  tail -5 "$dir"/log/*.log "$dir"/*.out >&2 || true
  return 1
}

slurm_cluster_stop() {
  local pid
  for pid in "${SLURM_CLUSTER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${SLURM_CLUSTER_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  SLURM_CLUSTER_PIDS=()
}
