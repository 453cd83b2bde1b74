"""libqi's smallest crash: a call whose argument is a list nested DEPTH deep kills the callee's process (SIGSEGV).

Standalone (libqi only), for filing with libqi: ``python nested_crash.py 5000``. The callee decodes the
argument recursively on a libqi event-loop thread before any Python runs, so no signature and no check of the
method can stop it; with an 8 MB thread stack (``ulimit -s 8192``) it dies from about 3,350 levels on (a
bigger stack moves the depth, it does not remove the crash). The caller's own conversion recurses too, hence
its thread's large stack. docs/reliability.md ("For libqi") has the backtrace.
"""

import sys
import threading

import qi


class Callee:
    @qi.bind(qi.Int64, [qi.Dynamic])
    def take(self, value):
        return 0


def call(depth):
    server = qi.Session()
    server.listenStandalone("tcp://127.0.0.1:0")
    server.registerService("Callee", Callee())
    client = qi.Session()
    client.connect(server.endpoints()[0])
    value = 0
    for _ in range(depth):
        value = [value]
    print("answered", client.service("Callee").take(value), flush=True)  # the process dies before this
    client.close()
    server.close()


if __name__ == "__main__":
    sys.setrecursionlimit(1 << 30)
    threading.stack_size(1 << 29)
    caller = threading.Thread(target=call, args=(int(sys.argv[1]),))
    caller.start()
    caller.join()
