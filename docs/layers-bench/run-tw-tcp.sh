#!/bin/bash
set -u
for i in 1 2; do
  for side in after before; do
    if [ $side = before ]; then dir=/work/wt-base; else dir=/work/main; fi
    cd $dir
    echo "== $side set $i: $(git log -1 --format=%h) $(date -u +%H:%M:%S)"
    build/ucpumap-bench datapath --rows two-way,two-way-no-direct-bulk,tcp-kernel,tcp,tcp-coalesce --rounds 2 --seconds 4 --json /tmp/bench2-$side-$i.json > /tmp/bench2-$side-$i.txt 2>&1
    echo "rc=$?"
  done
done
