# Two commands for a fresh machine: `make demo` and `make test`.
# Each creates .venv if it is missing and installs the project into it.
PYTHON ?= python3
# Extras to install: dev (tests, lint), compare (ikpy, for the report), view (the live
# 3-D view: viser); add train to cross-check RPROP against PyTorch.
EXTRAS ?= dev,compare,view
VENV := .venv
BIN := $(VENV)/bin
comma := ,
STAMP := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))

.PHONY: demo test soak bench report lint clean view-screenshot view-cost package same-answers same-answers-write

# libqi (the 'qi' package) has wheels for CPython 3.8-3.12 on Linux x86_64 only; nao-ik needs 3.9 or newer.
CHECK_PYTHON := import sys, platform; v = sys.version_info[:2]; ok = (3, 9) <= v <= (3, 12) and \
	platform.system() == "Linux" and platform.machine() == "x86_64"; \
	ok or sys.exit("nao-ik needs CPython 3.9-3.12 on Linux x86_64 (libqi has no wheel for Python %d.%d on %s %s); " \
	"run with another Python, e.g. make PYTHON=python3.12 ..." % (v + (platform.system(), platform.machine())))

$(STAMP): pyproject.toml
	@$(PYTHON) -c '$(CHECK_PYTHON)'
	@echo "Setting up $(VENV) with nao-ik and the extras $(EXTRAS) (the first time: a minute or two)"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --progress-bar off -e ".[$(EXTRAS)]" | grep -E '^(Collecting|Successfully)' || true
	$(BIN)/python -c "import qi" || (echo "libqi did not install: see above" && exit 1)
	touch $(STAMP)

# The live view is on while the demo runs: open the address it prints.
demo: $(STAMP)
	$(BIN)/nao-ik demo --view

# The suite: six worker processes, since most tests wait on the simulated robot's motions rather than compute, the
# longest files first (tests/conftest.py); progress as it runs, the reliability figures at the end. `time make test` (or `time .venv/bin/python -m pytest
# -n N --dist loadfile` for another count of workers) gives its wall and CPU time.
test: $(STAMP)
	$(BIN)/ruff check nao_ik sim_stub tests
	$(BIN)/python -m pytest -n 6 --dist loadfile --no-loadscope-reorder

# The long variant of the reliability tests: 2000 examples per property, 40 continuity paths per arm and
# method, 60 reaches near the body per motion profile, 20,000 hostile calls over qi (6,000 to the arm
# methods), the service's end-to-end and safety tests (reaches, poses, paths, both arms, grasp, pointAt,
# hands, moving arms, the load test, the robot runtime, the boxes, followTarget) against the simulated robot's two other
# motion profiles (make test runs them against the default one, smooth), the robot-is-the-truth tests under
# every profile with 120 rounds of another ALMotion user (make test: 30, smooth), the sample diagram through its
# packaged boxes 20 times in a row against one service and against the robot runtime (make test: 5 and 3), a
# 2000-point path alternating between two places sent in full (40 s; make test sends 200 of them), followTarget's
# circles for 20 s (make test: 6 s), and a one-minute load run with 4 client processes.
SAFETY_TESTS := tests/system/test_service.py tests/system/test_service_arms.py tests/system/test_service_pose.py \
	tests/unit/geometry/test_motion_body.py tests/system/test_path_jobs.py tests/unit/sim_stub/test_protection.py \
	tests/system/test_reliability.py tests/system/test_robot_runtime.py tests/system/test_behaviors.py \
	tests/system/test_faults.py tests/system/test_sent_answers.py tests/system/test_box_outcomes.py \
	tests/system/test_follow.py
soak: $(STAMP)
	for profile in linear synchronised; do \
		NAO_IK_STUB_PROFILE=$$profile $(BIN)/python -m pytest -q -n 2 --dist loadfile $(SAFETY_TESTS) || exit 1; \
	done
	for profile in smooth linear synchronised; do \
		NAO_IK_STUB_PROFILE=$$profile NAO_IK_SOAK=1 $(BIN)/python -m pytest -q tests/system/test_robot_truth.py \
			tests/system/test_another_user.py || exit 1; \
	done
	NAO_IK_SOAK=1 $(BIN)/python -m pytest -q tests/system/test_reliability.py tests/system/test_round_trips.py \
		tests/unit/evidence/test_continuity.py tests/system/test_path_cost.py tests/unit/geometry/test_closest.py
	NAO_IK_SOAK=1 $(BIN)/python -m pytest -q -k run_after_run tests/system/test_box_outcomes.py \
		tests/system/test_robot_runtime.py
	NAO_IK_SOAK=1 NAO_IK_HOSTILE_CALLS=20000 NAO_IK_HOSTILE_ARM_CALLS=2000 $(BIN)/python -m pytest -q \
		tests/system/test_hostile.py tests/system/test_hostile_arms.py tests/system/test_follow.py
	$(BIN)/nao-ik loadtest --clients 4 --seconds 60

# The golden answers (tests/unit/api/data/same_answers.npz) bit for bit, for a change that should only make
# things faster; same-answers-write rewrites them, for a change meant to change answers (say why in its
# commit). OpenBLAS picks its kernels by CPU and theirs round differently, so these two commands, not the
# tests, run the kernels the file was written with; make test compares the answers within a tolerance that
# holds on every kernel. Bit for bit also needs numpy's loops for the CPU that wrote the file (AVX-512): on
# another, run same-answers-write before the change, same-answers after, then git checkout the file.
GOLDEN_KERNEL := OPENBLAS_CORETYPE=Haswell
same-answers: $(STAMP)
	$(GOLDEN_KERNEL) $(BIN)/python -m tests.unit.api.test_same_answers --exact

same-answers-write: $(STAMP)
	$(GOLDEN_KERNEL) $(BIN)/python -m tests.unit.api.test_same_answers --write

report: $(STAMP)
	$(BIN)/nao-ik report --out docs/report

bench: $(STAMP)
	$(BIN)/nao-ik bench --out docs/bench.md

# The README's picture of the live view (needs Chromium: apt-get install chromium).
view-screenshot: $(STAMP)
	$(BIN)/nao-ik view --screenshot docs/view.png

# The view's CPU cost to the simulated robot, with and without a browser (needs Chromium).
view-cost: $(STAMP)
	$(BIN)/nao-ik view-cost --seconds 30 --rounds 2 --out docs/view-cost.md

# The Choregraphe package: the boxes and the robot runtime, its manifest declaring the NaoArmIK service
# (standard library only: no venv needed). Install it with ./deploy.sh --on-robot, or with Choregraphe.
PKG ?= build/nao-ik.pkg
package:
	$(PYTHON) nao_ik/robot/package.py $(PKG)

lint: $(STAMP)
	$(BIN)/ruff check nao_ik sim_stub tests
	$(BIN)/ruff format --check nao_ik sim_stub tests
	$(BIN)/shellcheck deploy.sh .ci/run

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
