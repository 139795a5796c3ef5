//! Only tests live here (tests/): each binding against its real server, CRUD, end to end, knobs, faults.
