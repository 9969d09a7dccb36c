#!/bin/bash
# Slurm job array: one `crowdfield study` spread over the array's tasks, one shard each.
# Submit with:  sbatch --array=0-15 deploy/slurm_study.sh MAP OUT [study options...]
# and, once every task is done, merge into OUT/study.json and OUT/study.html (the same files
# one machine writes) with the same options:
#   crowdfield study MAP [study options...] --merge --out OUT
# or as a job that waits for the array:  sbatch --dependency=afterok:JOBID --wrap "crowdfield study ... --merge --out OUT"
# Each task runs shard $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT (0-based, the same
# numbering as --shard): disjoint slices of the (scenario, seed) runs, each in its own folder
# OUT/runs/<scenario>/seed-<k>/, so the tasks never write the same file. CROWDFIELD names the
# binary (default: crowdfield on the PATH).
#SBATCH --job-name=crowdfield-study
#SBATCH --array=0-15
#SBATCH --cpus-per-task=8
#SBATCH --mem=16G
#SBATCH --time=04:00:00
set -euo pipefail
MAP=${1:?usage: sbatch deploy/slurm_study.sh MAP OUT [study options...]}
OUT=${2:?usage: sbatch deploy/slurm_study.sh MAP OUT [study options...]}
shift 2
"${CROWDFIELD:-crowdfield}" study "$MAP" "$@" --out "$OUT" --quiet \
    --shard "${SLURM_ARRAY_TASK_ID}/${SLURM_ARRAY_TASK_COUNT}"
