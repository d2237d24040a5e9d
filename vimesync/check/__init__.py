"""`patches check`: series -> parse every patch -> source -> apply the stack -> parse the Python."""
