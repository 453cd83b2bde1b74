"""A live 3-D view of NAO in the browser (optional extra ``view``: ``pip install nao-ik[view]``).

Nothing here is imported by the library core or the service: ``nao-ik sim
--view``, ``nao-ik view`` and ``nao-ik demo --view`` import it when asked.
The page is served by viser (its browser client ships in its wheel):

- :mod:`.shapes`: the body drawn as simple primitives, one data table;
- :mod:`.scene`: the robot in a viser scene (a kinematic tree of the arms, the head);
- :mod:`.page`: the page's controls (target gizmo, method chooser, the answer);
- :mod:`.sources`: where joint angles come from (the stub in process, ALMotion over qi, a recording);
- :mod:`.record`: the recording format (JSON lines);
- :mod:`.viewer`: the loop that ties them together;
- :mod:`.browser`: headless Chromium over the DevTools protocol (tests, screenshots);
- :mod:`.cost`: the CPU cost of the view, measured.
"""
