//! A `command` provider's template (`providers.<id>.command`), checked when config.json is read:
//! the prompt comes from other agents and finish notices too, so it is always one argument of
//! its own, never spliced into a larger one or run as a shell's script (SPEC 14).

/// Where a `command` template takes the prompt.
pub const PROMPT_PLACEHOLDER: &str = "{prompt}";

/// Programs that run their `-c` argument as shell code.
const SHELLS: [&str; 11] = [
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox",
];

/// Checks a `command` provider's template: `{prompt}` only as a whole argument, and never as
/// the script a shell runs with `-c`. The error is the index of the argument and why.
pub fn check_template(template: &[String]) -> Result<(), (usize, String)> {
    for (i, arg) in template.iter().enumerate() {
        if arg.contains(PROMPT_PLACEHOLDER) && arg != PROMPT_PLACEHOLDER {
            return Err((
                i,
                format!(
                    "{PROMPT_PLACEHOLDER} must be a whole argument (the prompt is passed as one \
                     argument, never spliced into a larger one): write {arg:?} as separate \
                     arguments (e.g. \"--msg\", \"{PROMPT_PLACEHOLDER}\"), or set \"stdin\": true"
                ),
            ));
        }
    }
    let is_shell = |a: &str| {
        let name = a.rsplit('/').next().unwrap_or(a);
        SHELLS.contains(&name)
    };
    let runs_script = |a: &str| {
        a.strip_prefix('-')
            .is_some_and(|flags| !flags.starts_with('-') && flags.contains('c'))
    };
    for (i, _) in template.iter().enumerate().filter(|(_, a)| is_shell(a)) {
        let rest = &template[i + 1..];
        let Some(c) = rest.iter().position(|a| runs_script(a)) else {
            continue;
        };
        // The script is the first argument after the options.
        let script = rest[c + 1..]
            .iter()
            .position(|a| !a.starts_with('-'))
            .map(|s| i + 1 + c + 1 + s);
        if let Some(s) = script.filter(|s| template[*s].contains(PROMPT_PLACEHOLDER)) {
            return Err((
                s,
                format!(
                    "{PROMPT_PLACEHOLDER} is the script {} runs with {}: the prompt would run as \
                     shell commands; pass it as an argument after the script (e.g. [\"sh\", \
                     \"-c\", \"bot \\\"$1\\\"\", \"sh\", \"{PROMPT_PLACEHOLDER}\"]) or set \"stdin\": true",
                    template[i],
                    rest[c]
                ),
            ));
        }
    }
    Ok(())
}
