#!/usr/bin/env bash
# Starts a one-node Slurm on this machine (munge, slurmctld, slurmd; Debian's slurm-wlm), for
# the test that runs a study as a Slurm job array (tests/slurm_study.rs). Installs the packages
# when missing; does nothing when a Slurm already answers. Needs root (or sudo).
set -euo pipefail
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
  echo "== installing Slurm and munge (Debian)" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq slurm-wlm munge >/dev/null
fi
if sinfo -h -o %T 2>/dev/null | grep -q idle; then
  exit 0
fi
host=$(hostname -s)
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
# munge: a key, then the daemon.
if [ ! -s /etc/munge/munge.key ]; then
  $SUDO mkdir -p /etc/munge
  $SUDO dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
fi
$SUDO mkdir -p /run/munge /var/log/munge /var/lib/munge
$SUDO chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
$SUDO chmod 0700 /etc/munge /var/log/munge /var/lib/munge
$SUDO chmod 0400 /etc/munge/munge.key
$SUDO chmod 0755 /run/munge
pgrep -x munged >/dev/null || $SUDO -u munge munged 2>/dev/null || $SUDO munged --force
# Slurm: one node, no cgroups (a container has none to give), everything as root.
conf_dir=/etc/slurm
$SUDO mkdir -p "$conf_dir" /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
$SUDO tee "$conf_dir/slurm.conf" >/dev/null <<EOF
ClusterName=crowdfield-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
NodeName=$host NodeAddr=127.0.0.1 NodeHostname=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
pgrep -x slurmctld >/dev/null || $SUDO slurmctld
pgrep -x slurmd >/dev/null || $SUDO slurmd
for _ in $(seq 1 30); do
  if sinfo -h -o %T 2>/dev/null | grep -q idle; then
    exit 0
  fi
  sleep 1
done
echo "Slurm did not come up: $(sinfo 2>&1 | tail -2)" >&2
tail -5 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
exit 1
