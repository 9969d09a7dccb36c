#!/bin/bash
# Slurm job array: spread `crowdfield batch` over 16 tasks, one shard each.
# Submit with:  sbatch deploy/slurm_batch.sh maps/ out/
# Each task runs shard $SLURM_ARRAY_TASK_ID of 16 (0-based, the same numbering as --shard);
# shards are disjoint slices of the sorted map list, so the tasks never write the same map.
# A task that dies is simply resubmitted: maps already complete (done.json matches) are skipped.
#SBATCH --job-name=crowdfield-batch
#SBATCH --array=0-15
#SBATCH --cpus-per-task=8
#SBATCH --mem=16G
#SBATCH --time=04:00:00
#SBATCH --output=logs/crowdfield-%A_%a.out
set -euo pipefail
INPUTS=${1:-maps/}
OUT=${2:-out/}
SHARDS=${SLURM_ARRAY_TASK_COUNT:-16}
mkdir -p logs "$OUT"
crowdfield batch "$INPUTS" --out "$OUT" \
    --shard "${SLURM_ARRAY_TASK_ID}/${SHARDS}" \
    --jobs "${SLURM_CPUS_PER_TASK:-8}" \
    --simulate --quiet
# Each shard writes OUT/summary-shard-I-of-N.{json,csv}; merge the CSVs afterwards with
#   (head -1 out/summary-shard-0-of-16.csv; tail -q -n +2 out/summary-shard-*-of-16.csv) > out/summary.csv
