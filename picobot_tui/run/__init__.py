"""What every front end shares to run a turn: options, settings and session opening, the
runtime (loop, model, tools, store), logging, exit codes and signals."""
