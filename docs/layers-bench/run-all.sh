#!/bin/bash
# before (0d2f4a3) and after (HEAD), alternating: before, after, before, after
set -u
for i in 1 2; do
  for side in before after; do
    if [ $side = before ]; then dir=/work/wt-base; else dir=/work/main; fi
    cd $dir
    echo "== $side round-set $i: $(git log -1 --format=%h) $(date -u +%H:%M:%S)"
    build/ucpumap-bench datapath --rounds 2 --seconds 4 --json /tmp/bench-$side-$i.json > /tmp/bench-$side-$i.txt 2>&1
    echo "rc=$?"
  done
done
