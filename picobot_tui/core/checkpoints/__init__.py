"""Checkpoints: every change the agent makes to files can be seen and undone.

Modules (one job each; import them directly, this package imports nothing):

- `store` — `CheckpointStore(root)`: content-addressed blobs and per-session record files
  under `~/.picobot/data/checkpoints/` (`checkpoints_root(home)`), 0700/0600;
  `delete_session(key)` (a session store opened by `run.session_stores` calls
  `cleanup.delete_with_session` when it deletes a session).
- `records` — `FileState` (absent / file / link / unknown: not kept, "not undoable"),
  `Change` (session, turn, call id, tool, path, before, after), `Uncheckpointed`.
- `shadow_git` — `ShadowGit`: workspace snapshots with a private git dir (exec).
- `recorder` — `Recorder` / `recorder_for(settings)`: what the tool step records.
- `hook` — `run_checkpointed(...)`, the tool step's one seam; `not_undoable(...)` for the
  approval preview.
- `timeline` — `load_timeline(store, key) -> Timeline` (a branch holds a copy of its
  parent's records of the turns before `forked_at`): `.changes`, `.since(turn)`,
  `.in_turn(turn)`, `.uncheckpointed`, `.parent`, `.forked_at`.
- `diff` — `file_diffs(store, timeline, turn=None) -> [FileDiff]` (+/− counts, unified
  text for `patch -p1`/`git apply`), `turn_stats(store, timeline)`, `patch_text(diffs)`.
- `restore` — `plan_restore(store, timeline, turn, paths=None) -> RestorePlan`
  (`.to_restore`, `.conflicts`, `.not_undoable`, `.uncheckpointed`), then
  `apply_restore(store, plan, overwrite=set_of_paths) -> RestoreResult`.
- `confined` — a restore's reads and writes below the workspace, through dir fds opened
  without following links (`Blocked`: a folder on the way is a link now).
- `rewind` — `plan_rewind`, `rewind(sessions, store, key, turn, code=, conversation=,
  overwrite=)` and `branch_session(sessions, store, key, turn)`.
- `limits` — `usage(store)`, `enforce(store, max_bytes, keep)`: the maxBytes cap.
- `cleanup` — what is in use (open sessions, `hold`/`unused` shadow repositories) and
  `after_delete(store, key)`: a deleted session's snapshots leave the shadow git.

Every function here blocks (file and git I/O): call it in a thread from async code.
Settings: the `checkpoints` group (core/settings.py `CheckpointsConfig`).
"""
