package server

import "errors"

// validate refuses the settings no server can run with, naming the flags
// of "idemlint serve" that give them.
func (c Config) validate() error {
	if c.MaxConnections < 1 || c.MaxBodyMemoryMiB < 1 || c.ReadTimeout <= 0 || c.DemoDelay < 0 || c.ShutdownTimeout <= 0 {
		return errors.New("--max-connections, --max-body-memory, --read-timeout and --shutdown-timeout must be positive, --demo-delay not negative")
	}
	if c.MinBodyRate < 0 {
		return errors.New("--min-body-rate must not be negative")
	}
	return nil
}
