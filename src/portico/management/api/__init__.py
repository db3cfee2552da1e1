"""APIs (services): the unit that is versioned by revisions and deployed."""
