"""Everything about jails, the walls around every untrusted stage (the frontend's Python, the C++
build, the native run, a CANN device process):

- bwrap.py: the bubblewrap command (namespaces, the read-only view, scratch, empty environment);
- confine.py: what a stage puts on itself inside (rlimits, seccomp);
- framing.py: the only channel, the broker's pipes, both sides;
- jail.py: the broker's side (PythonJail, the job's Deadline, the protocol's errors, JailedToolchain);
- inside.py: the one dispatch of what runs inside (`main`, STAGES);
- frontend.py: the frontend's jail (the pyasc zygote); a target's own jails are in its folder
  (targets/cpu/jailed.py, targets/cann/jailed.py);
- check.py: `ascrun worker --check-jail`, real probes in real jails.
"""
