#!/usr/bin/env bash
# A single-node SLURM cluster with accounting on 127.0.0.1, to try the project's slurm/
# profile on one machine (and for CI): munge, MariaDB, slurmdbd, slurmctld and slurmd, two
# partitions (cpu, the default, and gpu), two fake GPUs of type h100 (gres.conf File=
# lines pointing at /dev/null and /dev/zero), no systemd. Shaped like a real site:
# accounting enforces associations, limits and QOS; the account may use the QOS `normal`
# (its default) and `gpu`, and the gpu partition takes only jobs that name `--qos=gpu`
# (the profile's `qos` resource) and none longer than its MaxTime; a third QOS, `long`,
# exists but is not the account's, so a job asking for it is refused at submission.
#
#   workflow/slurm-local.sh start    install (apt-get, Debian's slurm-wlm) if needed, write
#                                    /etc/slurm/{slurm,slurmdbd,gres}.conf, start the daemons
#   workflow/slurm-local.sh stop     cancel the cluster's jobs, stop exactly the daemons that
#                                    start started (by the pids it recorded)
#   workflow/slurm-local.sh status   the recorded daemons, sinfo, squeue
#
# Needs root (or sudo) and a throwaway machine or container: it installs system packages
# and writes /etc/slurm/slurm.conf (the jobstep plugin drops SLURM_CONF inside jobs, so the
# config has to be at its default path). It refuses to touch a slurm.conf it did not write.
# Settings (environment): DFIL_SLURM_STATE (state, logs, database; /var/tmp/dfil-slurm-local),
# DFIL_SLURM_ACCOUNT (the account jobs charge; dfil-local), DFIL_SLURM_CPUS (CPUs the node
# offers; all of this machine's), DFIL_SLURM_MEM_MB (its memory; 80% of this machine's),
# DFIL_SLURM_USERS (users besides root and $SUDO_USER given an association under the
# account; they must exist).
set -euo pipefail

STATE=${DFIL_SLURM_STATE:-/var/tmp/dfil-slurm-local}
ACCOUNT=${DFIL_SLURM_ACCOUNT:-dfil-local}
CLUSTER=dfil-local
NODE=localnode
GPU_TYPE=h100
DB_PORT=3307
GPU_MAXTIME=02:00:00   # the gpu partition's MaxTime: the smoke grid's jobs ask for 30 min
CPU_MAXTIME=1-00:00:00
CONF=/etc/slurm
MARK="# Written by dfil workflow/slurm-local.sh"
DAEMONS=(munged mariadbd slurmdbd slurmctld slurmd)   # start order; stop is the reverse

say() { echo "slurm-local: $*"; }
die() { echo "slurm-local: error: $*" >&2; exit 1; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"
    elif command -v sudo >/dev/null 2>&1; then sudo "$@"
    else die "needs root (or sudo) to install and start system daemons"; fi
}

# --- pids: one file per daemon this script started; nothing else is ever signalled ------

pidfile() { echo "$STATE/pids/$1"; }

# The recorded pid of daemon $1, if that process is alive and still is that daemon.
live_pid() {
    local f pid comm
    f=$(pidfile "$1")
    [ -s "$f" ] || return 1
    pid=$(cat "$f")
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
    [ "$comm" = "$1" ] || return 1
    echo "$pid"
}

# Start daemon $1 in the foreground of a new session: $! is the daemon itself.
launch() {
    local name=$1; shift
    setsid "$@" </dev/null >>"$STATE/log/$name.out" 2>&1 &
    echo $! >"$(pidfile "$name")"
}

# Wait up to $1 seconds for the command after it to succeed.
wait_for() {
    local limit=$1 i; shift
    for ((i = 0; i < limit * 4; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.25
    done
    return 1
}

# --- install --------------------------------------------------------------------------------

install_packages() {
    local missing=0 cmd
    for cmd in munged mariadbd mariadb-install-db slurmdbd slurmctld slurmd sbatch sacct; do
        command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] || missing=1
    done
    [ "$missing" = 0 ] && return 0
    say "installing slurm-wlm, slurmdbd, munge, mariadb-server (apt-get)"
    # Debian starts services from postinst scripts; this script starts its own daemons, so
    # keep the packages from starting theirs (the usual container policy-rc.d).
    local policy=/usr/sbin/policy-rc.d added=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && added=1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        slurm-wlm slurm-client slurmdbd munge mariadb-server >/dev/null
    [ "$added" = 1 ] && rm -f "$policy"
    return 0
}

# --- configuration --------------------------------------------------------------------------

write_configs() {
    if [ -e "$CONF/slurm.conf" ] && ! grep -qF "$MARK" "$CONF/slurm.conf"; then
        die "$CONF/slurm.conf exists and was not written by this script; not touching it"
    fi
    local cpus mem host
    cpus=${DFIL_SLURM_CPUS:-$(nproc)}
    mem=${DFIL_SLURM_MEM_MB:-$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)}
    host=$(hostname -s)
    mkdir -p "$CONF"
    cat >"$CONF/slurm.conf" <<EOF
$MARK: a single-node test cluster on
# 127.0.0.1 (state and logs in $STATE). Remove it with the script's stop.
ClusterName=$CLUSTER
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$STATE/slurmctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
# No cgroups in a container: track job processes by parentage.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
# Jobs keep the nice value of the process that submitted them (nice snakemake ...).
PropagatePrioProcess=1
# DFIL_SLURM_CPUS may offer more CPUs than the machine has.
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
GresTypes=gpu
# Accounting through slurmdbd: sacct works (the plugin's status command), and as on a
# real cluster an unknown account, a QOS the association may not use and a job past a
# QOS's limits are rejected at submission.
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStorageEnforce=associations,limits,qos
# A job outside its partition's limits (MaxTime, AllowQos) is refused by sbatch, not left
# pending for ever.
EnforcePartLimits=ALL
AccountingStorageTRES=gres/gpu,gres/gpu:$GPU_TYPE
AccountingStoreFlags=job_comment
JobAcctGatherType=jobacct_gather/linux
JobCompType=jobcomp/none
MinJobAge=300
KillWait=30
InactiveLimit=0
SlurmdTimeout=300
NodeName=$NODE NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem Gres=gpu:$GPU_TYPE:2 State=UNKNOWN
PartitionName=cpu Nodes=$NODE Default=YES MaxTime=$CPU_MAXTIME AllowQos=normal,gpu State=UP
PartitionName=gpu Nodes=$NODE MaxTime=$GPU_MAXTIME AllowQos=gpu State=UP
EOF
    # One File= line per GPU: a bare Count= drains the node ("gres/gpu count reported
    # lower than configured"). The files only have to exist.
    cat >"$CONF/gres.conf" <<EOF
$MARK
NodeName=$NODE Name=gpu Type=$GPU_TYPE File=/dev/null
NodeName=$NODE Name=gpu Type=$GPU_TYPE File=/dev/zero
EOF
    cat >"$CONF/slurmdbd.conf" <<EOF
$MARK
AuthType=auth/munge
DbdAddr=127.0.0.1
DbdHost=localhost
SlurmUser=root
LogFile=$STATE/log/slurmdbd.log
PidFile=$STATE/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=dfil-local
StorageLoc=slurm_acct_db
EOF
    chmod 600 "$CONF/slurmdbd.conf"
}

# --- daemons --------------------------------------------------------------------------------

start_munge() {
    # A munged that is already serving the default socket (the machine's own) is used as
    # it is, and not recorded: stop leaves it alone.
    if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
        say "munged: using the one already running"
        return 0
    fi
    [ -s /etc/munge/munge.key ] || mungekey --create --keyfile=/etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge
    launch munged setpriv --reuid=munge --regid=munge --init-groups munged --foreground
    wait_for 10 sh -c 'munge -n | unmunge' || die "munged did not start ($STATE/log/munged.out)"
}

start_mariadb() {
    local db="$STATE/mysql" sock="$STATE/run/mysqld.sock"
    if [ ! -d "$db/mysql" ]; then
        say "initialising MariaDB in $db"
        mkdir -p "$db" && chown mysql:mysql "$db"
        mariadb-install-db --user=mysql --datadir="$db" --skip-test-db \
            --auth-root-authentication-method=socket >"$STATE/log/mariadb-install.out" 2>&1
    fi
    chown mysql:mysql "$STATE/run"
    launch mariadbd mariadbd --user=mysql --datadir="$db" --socket="$sock" \
        --port="$DB_PORT" --bind-address=127.0.0.1 --skip-name-resolve \
        --pid-file="$STATE/run/mariadbd.pid" --innodb-lock-wait-timeout=900 \
        --innodb-buffer-pool-size=256M
    wait_for 60 mariadb-admin --socket="$sock" ping || die "MariaDB did not start ($STATE/log/)"
    mariadb --socket="$sock" <<'EOF'
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'dfil-local';
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'dfil-local';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
EOF
}

# The QOS and the association tree: the cluster, an account that may use `normal` (its
# default) and `gpu`, and root, the user who called sudo and DFIL_SLURM_USERS in it. Each
# step is idempotent (`add` fails quietly on what exists; `modify` sets it again), so a
# database from an earlier version of this script gets the same tree.
add_associations() {
    local qos user
    sacctmgr -i add cluster "$CLUSTER" >/dev/null 2>&1 || true
    for qos in normal gpu long; do sacctmgr -i add qos "$qos" >/dev/null 2>&1 || true; done
    sacctmgr -i modify qos where name=gpu set MaxWall="$GPU_MAXTIME" >/dev/null 2>&1 || true
    sacctmgr -i add account "$ACCOUNT" cluster="$CLUSTER" \
        description="dfil local test account" >/dev/null 2>&1 || true
    sacctmgr -i modify account where name="$ACCOUNT" cluster="$CLUSTER" \
        set qos=normal,gpu defaultqos=normal >/dev/null 2>&1 || true
    for user in root ${SUDO_USER:-} ${DFIL_SLURM_USERS:-}; do
        sacctmgr -i add user "$user" account="$ACCOUNT" cluster="$CLUSTER" >/dev/null 2>&1 || true
        sacctmgr -i modify user where name="$user" account="$ACCOUNT" cluster="$CLUSTER" \
            set qos=normal,gpu defaultqos=normal >/dev/null 2>&1 || true
    done
    sacctmgr -n -P show assoc account="$ACCOUNT" format=user,qos,defaultqos | grep -q '^root|' \
        || die "no association for root under account $ACCOUNT ($STATE/log/slurmdbd.log)"
}

# GPU jobs: at most the node's 2 GPUs per user at a time. A limit on gres/gpu needs that
# TRES in the database, which slurmctld registers when it starts (AccountingStorageTRES):
# on a fresh database this runs after slurmctld is up.
qos_limits() {
    sacctmgr -i modify qos where name=gpu set MaxTRESPerUser=gres/gpu=2 >/dev/null 2>&1 || true
    sacctmgr -n -P show qos gpu format=maxtrespu | grep -q 'gres/gpu=2' \
        || die "QOS gpu has no MaxTRESPerUser=gres/gpu=2 ($STATE/log/slurmdbd.log)"
}

start_slurm() {
    launch slurmdbd slurmdbd -D
    wait_for 60 sacctmgr -n list cluster || die "slurmdbd did not answer ($STATE/log/slurmdbd.log)"
    add_associations
    launch slurmctld slurmctld -D
    wait_for 60 scontrol ping || die "slurmctld did not start ($STATE/log/slurmctld.log)"
    wait_for 30 sh -c "sacctmgr -n -P show tres type=gres name=gpu | grep -q gpu" \
        || die "slurmctld did not register the TRES gres/gpu ($STATE/log/slurmctld.log)"
    qos_limits
    launch slurmd slurmd -D -N "$NODE"
    if ! wait_for 60 sh -c "sinfo -h -n $NODE -o %T | grep -Eq '^(idle|mixed|allocated)'"; then
        sinfo -N -l >&2 || true
        scontrol show node "$NODE" | grep -i reason >&2 || true
        die "node $NODE did not come up idle ($STATE/log/slurmd.log)"
    fi
}

# Jobs slurmctld recovered from its saved state (a cluster stopped without `stop`, or a
# machine image taken while jobs were queued) hold the node with processes long gone: a
# fresh start cancels them, or the new jobs would pend behind them.
cancel_leftovers() {
    local left
    left=$(squeue -h -o %i | wc -l)
    [ "$left" -gt 0 ] || return 0
    say "cancelling $left job(s) recovered from an earlier run's state"
    squeue -h -o %i | xargs -r scancel >/dev/null 2>&1 || true
    wait_for 60 sh -c '[ -z "$(squeue -h -o %i)" ]' || say "jobs still listed after 60 s"
    wait_for 60 sh -c "sinfo -h -n $NODE -o %T | grep -q '^idle'" \
        || say "node $NODE not idle after 60 s: $(sinfo -h -n $NODE -o %T)"
}

cmd_start() {
    local d running=()
    for d in "${DAEMONS[@]}"; do live_pid "$d" >/dev/null && running+=("$d"); done
    if [ "${#running[@]}" -gt 0 ]; then
        say "already running (${running[*]}); '$0 stop' first to restart"
        # The association tree is brought up to date all the same (DFIL_SLURM_USERS).
        if live_pid slurmdbd >/dev/null; then add_associations && qos_limits; fi
        return 0
    fi
    install_packages
    mkdir -p "$STATE"/{pids,log,run,slurmctld,slurmd}
    rm -f "$STATE"/pids/*
    write_configs
    start_munge
    start_mariadb
    start_slurm
    cancel_leftovers
    say "up: account '$ACCOUNT' (QOS normal, gpu), partitions cpu (default) and gpu" \
        "(MaxTime $GPU_MAXTIME, QOS gpu only), 2 fake $GPU_TYPE GPUs"
    sinfo -o "%P %a %D %T %c %m %G %l"
}

# Signal pid $2 (daemon $1) with TERM, then KILL after 20 s.
stop_one() {
    local name=$1 pid=$2 i
    kill -TERM "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 80; i++)); do
        kill -0 "$pid" 2>/dev/null || { say "stopped $name ($pid)"; return 0; }
        sleep 0.25
    done
    say "$name ($pid) ignored SIGTERM for 20 s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
}

cmd_stop() {
    local i d pid
    if live_pid slurmctld >/dev/null; then
        # Jobs first, so no job step outlives the daemons that track it.
        squeue -h -o %i | xargs -r scancel >/dev/null 2>&1 || true
        wait_for 40 sh -c '[ -z "$(squeue -h -o %i)" ]' || say "jobs still listed after 40 s"
    fi
    for ((i = ${#DAEMONS[@]} - 1; i >= 0; i--)); do
        d=${DAEMONS[$i]}
        if pid=$(live_pid "$d"); then stop_one "$d" "$pid"; fi
        rm -f "$(pidfile "$d")"
    done
}

cmd_status() {
    local d pid
    for d in "${DAEMONS[@]}"; do
        if pid=$(live_pid "$d"); then echo "$d: running, pid $pid"
        else echo "$d: not started by this script"; fi
    done
    if live_pid slurmctld >/dev/null; then sinfo -o "%P %a %D %T %c %m %G"; squeue; fi
}

case "${1:-}" in
    start | stop | status)
        if [ "$(id -u)" != 0 ]; then as_root env "DFIL_SLURM_STATE=$STATE" \
            "DFIL_SLURM_ACCOUNT=$ACCOUNT" ${DFIL_SLURM_CPUS:+"DFIL_SLURM_CPUS=$DFIL_SLURM_CPUS"} \
            ${DFIL_SLURM_MEM_MB:+"DFIL_SLURM_MEM_MB=$DFIL_SLURM_MEM_MB"} \
            ${DFIL_SLURM_USERS:+"DFIL_SLURM_USERS=$DFIL_SLURM_USERS"} "$0" "$1"; exit; fi
        "cmd_$1" ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
