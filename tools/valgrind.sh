#!/usr/bin/env bash
# valgrind.sh - run a test program under valgrind memcheck (HOST_RUNNER of tools/targets/run-on):
# any memory error (invalid read/write, uninitialised value used, definite leak) fails the run
# with exit status 99.
exec valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    --track-origins=yes "$@"
