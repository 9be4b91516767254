#!/bin/sh
# The CANN worker: npu when an Ascend device is mounted, camodel (sim) otherwise, unless the
# arguments name a --target (a build-only npu worker has no device). Arguments are passed on.
set -e
. /usr/local/Ascend/ascend-toolkit/set_env.sh
case " $* " in
    *" --target "*) exec ascrun worker "$@" ;;
esac
if [ -e /dev/davinci0 ]; then
    exec ascrun worker --target npu "$@"
fi
exec ascrun worker --target sim "$@"
