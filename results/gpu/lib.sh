# Sourced by sessionN.sh (with N set): the environment, the log in $OUT, a tarball of /tmp/res
# written into $OUT however the session ends, and `step` to mark each step in the log.
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1 AUTOTUNE_CACHE=/tmp/cache
LOG=$OUT/session$N.log
trap 'tar czf $OUT/results$N.tgz -C /tmp res 2>/dev/null' EXIT
mkdir -p /tmp/res
step() { echo "=== $(date -u +%T) $*" | tee -a $LOG; }
