date -u; bash docs/runs/s44_next_calls.sh 2; date -u
