#!/bin/bash
for step in "new 1" "old 2" "new 2" "old 3" "new 3"; do /tmp/ab48/one.sh $step; done
echo ALLDONE
