#!/bin/bash
for step in "old 4" "new 4" "old 5" "new 5" "old 6" "new 6"; do /tmp/ab48/one.sh $step; done
echo ALLDONE3
