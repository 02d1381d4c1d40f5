"""hostreport: an example project that builds objects on resobj's."""
