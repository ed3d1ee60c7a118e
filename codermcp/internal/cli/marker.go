package cli

// runMarkerKey is set in every CLI child's environment with a per-run value
// (internal/procsweep): descendants inherit it, so after a cancellation the
// ones that left the process group are still found.
const runMarkerKey = "CODERMCP_RUN"
