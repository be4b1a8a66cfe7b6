# bash completion for sandgate(1) and sandgated(8)

_sandgate()
{
	local cur prev words cword
	_init_completion || return

	local cmds="status reload verify nft session run tool detail query reindex"
	local i cmd=""
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--control) ((i++)) ;;
		-*) ;;
		*) cmd=${words[i]}; break ;;
		esac
	done

	case $prev in
	--control|--config|--checkpoint|--key|--input-file|--output-file)
		_filedir; return ;;
	--state-dir|--cwd|--workdir|--cgroup)
		_filedir -d; return ;;
	--format) COMPREPLY=($(compgen -W "jsonl table" -- "$cur")); return ;;
	--fs) COMPREPLY=($(compgen -W "preserved deleted snapshot" -- "$cur")); return ;;
	--status) COMPREPLY=($(compgen -W "success error timeout" -- "$cur")); return ;;
	esac

	case $cmd in
	"")
		COMPREPLY=($(compgen -W "$cmds --control --help --version" -- "$cur")) ;;
	session)
		if [[ $prev == session ]]; then
			COMPREPLY=($(compgen -W "create start pause resume terminate cleanup list show" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "--id --tenant --user --template --policy --memory --cpus --pids --disk --timeout --iface --cgroup --workdir --net-rate --reason --fs --actor --control" -- "$cur"))
		fi ;;
	run) COMPREPLY=($(compgen -W "--session --uid --cwd --actor --control --" -- "$cur")) ;;
	verify) [[ $cur == -* ]] && COMPREPLY=($(compgen -W "--key --checkpoint" -- "$cur")) || _filedir -d ;;
	query) COMPREPLY=($(compgen -W "--session --since --until --event --path --domain --package --reason --uid --format --include-cold --state-dir --no-update" -- "$cur")) ;;
	tool) COMPREPLY=($(compgen -W "--session --name --status --model --input-summary --output-summary --call-id --duration-ms --input --input-file --output --output-file --input-tokens --output-tokens --actor --control" -- "$cur")) ;;
	detail) COMPREPLY=($(compgen -W "get --actor --control" -- "$cur")) ;;
	nft) COMPREPLY=($(compgen -W "render remove --config --queue --cgroup-level --fanout --fail-open --no-cgroup --no-iface" -- "$cur")) ;;
	reindex) COMPREPLY=($(compgen -W "--state-dir" -- "$cur")) ;;
	*) COMPREPLY=($(compgen -W "--control --help" -- "$cur")) ;;
	esac
} && complete -F _sandgate sandgate

_sandgated()
{
	local cur prev words cword
	_init_completion || return
	case $prev in
	--config|--check-config|--control) _filedir; return ;;
	--state-dir) _filedir -d; return ;;
	esac
	COMPREPLY=($(compgen -W "--config --state-dir --control --check-config --debug --help --version" -- "$cur"))
} && complete -F _sandgated sandgated
