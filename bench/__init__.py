"""minibatch-mcmc-bench harness: data layer, workflow and CLI."""
