//! How a command fails: whose fault it is decides the exit status.

/// A failure, sorted by whose fault it is.
#[derive(Debug)]
pub enum Failure {
    /// The command was asked for something impossible: exit 2.
    Usage(anyhow::Error),
    /// Something went wrong while doing it: exit 1.
    Runtime(anyhow::Error),
}

impl Failure {
    /// A usage error from a library's typed error.
    pub fn usage(error: impl Into<anyhow::Error>) -> Failure {
        Failure::Usage(error.into())
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Self {
        Failure::Runtime(error)
    }
}

/// Sort a simulator error: configuration problems are usage errors.
pub fn sim_failure(error: flashkit_sim::SimError) -> Failure {
    use flashkit_sim::SimError;
    use flashkit_trace::TraceError;
    match error {
        SimError::Config(_) | SimError::Trace(TraceError::Spec(_) | TraceError::Options(_)) => {
            Failure::Usage(error.into())
        }
        SimError::Io(_) => Failure::Runtime(error.into()),
        other => Failure::Runtime(other.into()),
    }
}

/// What a command returns.
pub type Outcome = Result<(), Failure>;
