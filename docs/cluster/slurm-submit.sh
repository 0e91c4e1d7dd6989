#!/bin/bash
# Submits the grading array, then the merge, which starts once every task has ended (afterany:
# if a task failed, the merge's one-line error names the submissions it lost).
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p "{{OUT}}/logs"  # Slurm does not create the folder of --output
array=$(sbatch --parsable slurm-array.sbatch)
sbatch --dependency=afterany:"${array%%;*}" slurm-merge.sbatch
