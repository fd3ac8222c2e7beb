package suite

import (
	"context"
	"fmt"

	"github.com/bitexact/bitexact/golden"
	"github.com/bitexact/bitexact/refimpl/ops"
)

// ProfileParams returns the parameters that select profile p, spelled as
// the suite's golden cases spell them (a profile key a case leaves out
// takes the op's default). ok is false when no case of the suite has p.
func (s *Suite) ProfileParams(p string) (params map[string]string, ok bool) {
	for _, t := range s.Tasks {
		if c, ok := t.Cases[p]; ok {
			m := map[string]string{}
			for _, k := range s.ProfileKeys {
				if v, ok := c.Params[k]; ok {
					m[k] = v
				}
			}
			return m, true
		}
	}
	return nil, false
}

// Params returns the op parameters of task t under profile p: the task's
// fixed parameters with p's profile parameters. Where the golden set has
// the pair, they select the same outputs as the case's own parameters;
// where it does not, they are what Compute runs. A spec-string profile
// (ParseProfile) has no case: its parameters are the ones it spells.
func (s *Suite) Params(t Task, p string) (ops.Params, error) {
	pp, ok := s.ProfileParams(p)
	if !ok {
		var err error
		if pp, err = s.ParseProfile(p); err != nil {
			return nil, fmt.Errorf("profile %q is not a profile of suite %s: %v", p, s.Name, err)
		}
	}
	params := ops.Params{}
	for k, v := range t.Params {
		params[k] = v
	}
	for k, v := range pp {
		params[k] = v
	}
	return params, nil
}

// Compute computes the outputs of task t under profile p through e from
// the task's inputs in: the expected outputs of a (task, profile) pair the
// golden set holds no case for. An error means the reference does not
// define the profile on this task (the op refuses the parameters or the
// inputs); a claim of p cannot then be checked on t.
func (s *Suite) Compute(ctx context.Context, e golden.Engine, t Task, p string, in ops.Tensors) (ops.Tensors, error) {
	params, err := s.Params(t, p)
	if err != nil {
		return nil, err
	}
	out, err := e.Run(ctx, s.Op, params, in)
	if err != nil {
		return nil, fmt.Errorf("%s %v on the inputs of task %s: %w", s.Op, map[string]string(params), t.Name, err)
	}
	return out, nil
}
