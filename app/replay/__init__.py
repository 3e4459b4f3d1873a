"""What a recording is good for after the fact: ``player`` feeds it back
through an ordinary session (``callstream replay``), ``audit`` asks what an
eager dispatcher would have done with its fragments (``callstream audit``)."""
