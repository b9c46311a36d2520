<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>PlanFields</name>
    <message>
        <location filename="../ui/plan/field_table.cpp" line="+40"/>
        <source>Command of every rank</source>
        <translation>每个 rank 的命令</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A JSON list, e.g. [&quot;python3&quot;, &quot;train.py&quot;]: run instead of trellis-trainer, with torchrun&apos;s variables set (docs/pytorch.md); never a shell line. Empty: trellis-trainer trains this plan</source>
        <translation>一个 JSON 列表，例如 [&quot;python3&quot;, &quot;train.py&quot;]：代替 trellis-trainer 运行，并设置 torchrun 的变量（docs/pytorch.md）；绝不是 shell 命令行。留空：由 trellis-trainer 训练此计划</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Its environment</source>
        <translation>其环境变量</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A JSON object of NAME: &quot;value&quot; pairs added to every rank&apos;s environment</source>
        <translation>一个由 NAME: &quot;值&quot; 组成的 JSON 对象，加入每个 rank 的环境</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Its folder</source>
        <translation>其目录</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Where the command runs: here relative to the plan&apos;s folder (empty: that folder); on ssh and Slurm hosts as written, relative to the rank&apos;s run folder there</source>
        <translation>命令运行的目录：在本机相对于计划所在目录（留空：即该目录）；在 ssh 和 Slurm 主机上按原样使用，相对于该 rank 在那里的运行目录</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Plan name</source>
        <translation>方案名称</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Model preset</source>
        <translation>模型预设</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Choosing a preset replaces every model field with the preset&apos;s</source>
        <translation>选择预设会用预设的值替换所有模型字段</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Architecture</source>
        <translation>架构</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Layers</source>
        <translation>层数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hidden size</source>
        <translation>隐藏层维度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Attention heads</source>
        <translation>注意力头数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Key/value heads</source>
        <translation>KV 头数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fewer than the heads: grouped-query attention</source>
        <translation>少于注意力头数时：分组查询注意力 (GQA)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MLP width</source>
        <translation>MLP 宽度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Sequence length</source>
        <translation>序列长度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Vocabulary</source>
        <translation>词表大小</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Experts (MoE)</source>
        <translation>专家数 (MoE)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>0: a dense model</source>
        <translation>0：稠密模型</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Experts per token</source>
        <translation>每个 token 的专家数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Expert capacity factor</source>
        <translation>专家容量系数</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Empty: dropless routing. Else each expert takes at most factor · seq_len · top_k / experts tokens of a sequence; the rest are dropped</source>
        <translation>留空：不丢弃的路由。否则每个专家最多接收一个序列中 系数 · seq_len · top_k / 专家数 个词元，其余丢弃</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Load-balancing loss weight</source>
        <translation>负载均衡损失权重</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Switch Transformer&apos;s auxiliary loss, per sequence</source>
        <translation>Switch Transformer 的辅助损失，按序列计算</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Cluster preset</source>
        <translation>集群预设</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Choosing a preset makes every node and link the preset&apos;s, keeping the node count</source>
        <translation>选择预设会将所有节点和链路设为预设的值，节点数量保持不变</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Nodes</source>
        <translation>节点数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Nodes added are copies of the last one: one undo step however many</source>
        <translation>新增节点均为最后一个节点的副本：无论添加多少个，都只算一个撤销步骤</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Node list</source>
        <translation>节点列表</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Intra-node GB/s</source>
        <translation>节点内 GB/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Intra-node latency µs</source>
        <translation>节点内延迟 µs</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Inter-node GB/s</source>
        <translation>节点间 GB/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Inter-node latency µs</source>
        <translation>节点间延迟 µs</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Price per device-hour</source>
        <translation>每设备小时价格</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Host memory a node (GB)</source>
        <translation>每节点主机内存 (GB)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Each node&apos;s host memory, for checkpoints&apos; staging buffers: async saves are the default unless they would take more than half of it. Empty: not known (the trainer reads its machine&apos;s)</source>
        <translation>每个节点的主机内存，用于检查点的暂存缓冲区：默认异步保存，除非缓冲区会占用其一半以上。留空：未知 (训练器读取其所在机器的)</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Data parallel (dp)</source>
        <translation>数据并行 (dp)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tensor parallel (tp)</source>
        <translation>张量并行 (tp)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Offered: the divisors of the attention heads</source>
        <translation>可选值：注意力头数的约数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pipeline stages (pp)</source>
        <translation>流水线阶段数 (pp)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>At most the number of layers</source>
        <translation>最多为层数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Context parallel (cp)</source>
        <translation>上下文并行 (cp)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Context-parallel layout</source>
        <translation>上下文并行布局</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>zigzag: each rank holds chunks r and 2·cp−1−r of the sequence, balancing causal attention</source>
        <translation>zigzag：每个 rank 持有序列的第 r 与第 2·cp−1−r 块，使因果注意力负载均衡</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>All-reduce algorithm</source>
        <translation>All-reduce 算法</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>auto: the library decides; hierarchical: inside each node, then across nodes, then inside again. The Collectives tab predicts each</source>
        <translation>auto：由通信库决定；hierarchical：先在各节点内，再跨节点，最后回到节点内。“集合通信”页预测每一种</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Expert parallel (ep)</source>
        <translation>专家并行 (ep)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ZeRO stage</source>
        <translation>ZeRO 阶段</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Sequence parallelism</source>
        <translation>序列并行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pipeline schedule</source>
        <translation>流水线调度</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Virtual stages</source>
        <translation>虚拟阶段数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Micro-batch size</source>
        <translation>微批次大小</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Micro-batches</source>
        <translation>微批次数</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Recompute</source>
        <translation>重计算</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>bf16/fp16: 16-bit weights and activations, fp32 master weights, gradients and Adam moments; fp16 also scales the loss</source>
        <translation>bf16/fp16：16 位权重和激活，fp32 主权重、梯度和 Adam 矩；fp16 还会缩放损失</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Gradient reduction in</source>
        <translation>梯度归约精度</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>bf16: data-parallel gradients travel as bf16 (half the bytes, rounded); mixed precision only</source>
        <translation>bf16：数据并行梯度以 bf16 传输（字节减半，经舍入）；仅用于混合精度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>fp16 initial loss scale</source>
        <translation>fp16 初始损失缩放</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The loss is multiplied by it before backward (65536 = 2^16)</source>
        <translation>反向传播前损失乘以该值（65536 = 2^16）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>fp16 scale growth interval</source>
        <translation>fp16 缩放增长间隔</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Steps without overflow after which the scale grows</source>
        <translation>无溢出达到该步数后缩放增大</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>fp16 scale growth factor</source>
        <translation>fp16 缩放增长因子</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>fp16 scale backoff</source>
        <translation>fp16 缩放回退</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The factor the scale shrinks by when a step overflows (and is skipped)</source>
        <translation>某步溢出（并被跳过）时缩放乘以的缩小因子</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>fp16 minimum scale</source>
        <translation>fp16 最小缩放</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>fp16 skipped steps in a row</source>
        <translation>fp16 连续跳过步数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>More overflowing steps in a row than this stop the run</source>
        <translation>连续溢出步数超过此值时停止运行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Data-parallel sync</source>
        <translation>数据并行同步</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>local_sgd, diloco: the replicas step alone and meet every inner_steps steps</source>
        <translation>local_sgd、diloco：各副本独立训练，每 inner_steps 步同步一次</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Inner steps</source>
        <translation>内部步数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Steps each replica takes alone between outer steps</source>
        <translation>两次外部步之间每个副本独立执行的步数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Outer learning rate</source>
        <translation>外部学习率</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Outer momentum</source>
        <translation>外部动量</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Nesterov outer step</source>
        <translation>Nesterov 外部步</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gradient compression</source>
        <translation>梯度压缩</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>powersgd: each gradient matrix all-reduced as two rank-r factors, with error feedback</source>
        <translation>powersgd：每个梯度矩阵以两个秩为 r 的因子做 all-reduce，带误差反馈</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compression rank</source>
        <translation>压缩秩</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Clamped per matrix to min(rows, columns)</source>
        <translation>每个矩阵限制为 min(行数, 列数)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Warm start</source>
        <translation>热启动</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Each step&apos;s factors start from the last step&apos;s</source>
        <translation>每一步的因子从上一步的因子开始</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Memory accounting of</source>
        <translation>内存核算依据</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>auto: trellis-trainer on CPUs, Megatron-LM on GPUs (DeepSpeed with ZeRO 2/3)</source>
        <translation>auto：CPU 上为 trellis-trainer，GPU 上为 Megatron-LM（ZeRO 2/3 时为 DeepSpeed）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Attention kernel</source>
        <translation>注意力内核</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>auto: flash on GPUs, materialized on CPUs</source>
        <translation>auto：GPU 上为 flash，CPU 上为显式计算</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gradient bucket MB</source>
        <translation>梯度桶 MB</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Empty: 25 MB, or the whole model</source>
        <translation>留空：25 MB 或整个模型</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>First bucket MB</source>
        <translation>首个桶 MB</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Empty: the bucket size</source>
        <translation>留空：与桶大小相同</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Overlap gradient reduction</source>
        <translation>梯度规约与计算重叠</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Steps</source>
        <translation>步数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Minimum learning rate</source>
        <translation>最小学习率</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Warm-up steps</source>
        <translation>预热步数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Weight decay</source>
        <translation>权重衰减</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Adam β1</source>
        <translation>Adam β1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Adam β2</source>
        <translation>Adam β2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Adam ε</source>
        <translation>Adam ε</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Gradient clip (0: off)</source>
        <translation>梯度裁剪 (0：关闭)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>On NaN/Inf</source>
        <translation>遇到 NaN/Inf 时</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Data source</source>
        <translation>数据来源</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Data path</source>
        <translation>数据路径</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Relative paths are relative to the plan file&apos;s folder</source>
        <translation>相对路径相对于方案文件所在的文件夹</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checkpoint every (steps)</source>
        <translation>检查点间隔 (步)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Checkpoint folder</source>
        <translation>检查点文件夹</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checkpoints kept</source>
        <translation>保留的检查点数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checkpoint writing</source>
        <translation>检查点写入方式</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>async: each rank copies its state to host memory at the step boundary and trains on while a thread writes it; sync: training waits for the disk. Not set: async unless the staging buffers would take more than half a node&apos;s host memory</source>
        <translation>async：每个 rank 在步边界把状态复制到主机内存，并在线程写入时继续训练；sync：训练等待磁盘。未设置：异步，除非暂存缓冲区会占用节点主机内存的一半以上</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>In-memory checkpoint every (steps)</source>
        <translation>内存检查点间隔（步）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Empty: none. Each rank&apos;s state in its node&apos;s shared memory every this many steps, the newest kept (training.checkpoint.memory.keep, 2); a restart reads it before the disk. On several nodes each node&apos;s is copied to the next node&apos;s, so a lost node&apos;s state comes from there</source>
        <translation>空：不使用。每隔这么多步把每个 rank 的状态存入其节点的共享内存，保留最新的（training.checkpoint.memory.keep，默认 2）；重启时先读它，再读磁盘。多节点时，每个节点的内容会复制到下一个节点，因此丢失节点的状态可从那里恢复</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Checkpoint due while writing</source>
        <translation>写入期间到期的检查点</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Async saves: a save due while the one before is still being written waits for it (every save asked for is made) or is skipped (training never waits for the disk)</source>
        <translation>异步保存：上一次仍在写入时到期的保存会等待它 (每次要求的保存都会完成) 或被跳过 (训练从不等待磁盘)</translation>
    </message>
    <message>
        <source>async: each rank copies its state to host memory at the step boundary and trains on while a thread writes it (a save due while one is still being written is skipped); sync: training waits for the disk. Not set: async unless the staging buffers would take more than half a node&apos;s host memory</source>
        <translation type="vanished">async：每个 rank 在步边界把状态复制到主机内存，并在线程写入时继续训练 (上一次仍在写入时到期的保存将被跳过)；sync：训练等待磁盘。未设置：异步，除非暂存缓冲区会占用节点主机内存的一半以上</translation>
    </message>
    <message>
        <source>async: each rank copies its state to host memory at the step boundary and trains on while a thread writes it; sync: training waits for the disk</source>
        <translation type="vanished">async：每个 rank 在步与步之间把状态复制到主机内存，由一个线程写入磁盘，训练继续进行；sync：训练等待磁盘写完</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Start from weights</source>
        <translation>从权重开始</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A folder with model.safetensors and config.json in transformers&apos; layout (trellis-cli export-model writes one); empty: the seed&apos;s initialisation</source>
        <translation>包含 transformers 布局的 model.safetensors 和 config.json 的文件夹 (trellis-cli export-model 会生成)；留空：按种子初始化</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Endpoint</source>
        <translation>端点</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Empty: the launcher chooses a private one</source>
        <translation>留空：由启动器选择一个私有端点</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Heartbeat ms</source>
        <translation>心跳间隔 ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Relay per node</source>
        <translation>每节点中继</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>on: a relay process per node carries its ranks&apos; telemetry on one connection; auto: from 64 ranks</source>
        <translation>on：每个节点一个中继进程，用一条连接转发该节点各 rank 的遥测；auto：从 64 个 rank 起</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Trace every (steps)</source>
        <translation>追踪间隔 (步)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Spans for the step timeline every so many steps; 0: none</source>
        <translation>每隔这么多步记录一次单步时间线的 span；0：不记录</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run history</source>
        <translation>运行历史</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Where this plan&apos;s runs are recorded: a file (relative to the plan&apos;s folder) or a team&apos;s postgresql://USER@HOST/DBNAME, never with a password; empty: the workbench&apos;s</source>
        <translation>此计划的运行记录在何处：一个文件（相对于计划所在文件夹）或团队的 postgresql://USER@HOST/DBNAME，绝不含密码；留空：使用工作台的</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Target</source>
        <translation>目标</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>SSH user</source>
        <translation>SSH 用户</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>SSH port</source>
        <translation>SSH 端口</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>SSH identity file</source>
        <translation>SSH 密钥文件</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>SSH known-hosts file</source>
        <translation>SSH 已知主机文件</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run folder on the hosts</source>
        <translation>主机上的运行目录</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Trainer on the hosts</source>
        <translation>主机上的训练程序</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copy the trainer to the hosts</source>
        <translation>将训练程序复制到主机</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hosts share the remote folder</source>
        <translation>主机共享远程文件夹</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MPI network between hosts</source>
        <translation>主机间的 MPI 网络</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Address the hosts reach this machine at</source>
        <translation>主机访问本机所用的地址</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Slurm partition</source>
        <translation>Slurm 分区</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Slurm account</source>
        <translation>Slurm 账户</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Slurm QOS</source>
        <translation>Slurm QOS</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Slurm time limit</source>
        <translation>Slurm 时间限制</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Folder shared with the Slurm nodes</source>
        <translation>与 Slurm 节点共享的文件夹</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Empty: the run folder, which the nodes must see at the same path</source>
        <translation>留空：使用运行文件夹，节点必须以相同路径看到它</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Trainer on the Slurm nodes</source>
        <translation>Slurm 节点上的训练程序</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MPI network between Slurm nodes</source>
        <translation>Slurm 节点之间的 MPI 网络</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Address the Slurm nodes reach this machine at</source>
        <translation>Slurm 节点访问本机所用的地址</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hang timeout s</source>
        <translation>挂起超时 s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Before a first step, how long a rank may make no progress; after it, the least the learned timeout is</source>
        <translation>第一步之前，rank 可以多久没有进展；之后，学习到的超时的下限</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hang confirmation s</source>
        <translation>挂起确认 s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A rank holding the others up is a stall; stopped (or silent on a remote host) this long, a hang</source>
        <translation>拖住其他 rank 的 rank 是一次停顿；停止（或在远程主机上静默）这么久则为挂起</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hang timeout × longest step</source>
        <translation>挂起超时 × 最长步</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A rank that answers but has not moved for this many times the longest step so far is hung</source>
        <translation>仍有响应但在迄今最长步的这么多倍时间内没有进展的 rank 视为挂起</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Restarts at most</source>
        <translation>最大重启次数</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Restart back-off s</source>
        <translation>重启退避 s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Restart on a crash</source>
        <translation>崩溃时重启</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Restart on a hang</source>
        <translation>挂起时重启</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Restart on a lost node</source>
        <translation>节点丢失时重启</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Elastic (fewer nodes)</source>
        <translation>弹性 (可减少节点)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Alert command</source>
        <translation>告警命令</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A JSON list: the program and its arguments, never a shell line</source>
        <translation>JSON 列表：程序及其参数，而不是 shell 命令行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Alert webhook</source>
        <translation>告警 Webhook</translation>
    </message>
    <message>
        <location line="+59"/>
        <source>Own trainer (a PyTorch or other script)</source>
        <translation>自带训练程序（PyTorch 或其他脚本）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cluster</source>
        <translation>集群</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Parallelism</source>
        <translation>并行策略</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Telemetry</source>
        <translation>遥测</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Launch</source>
        <translation>启动</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <location filename="../ui/dashboards/panel.cpp" line="+96"/>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <location line="+73"/>
        <source>rank %1</source>
        <translation>rank %1</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>min – max</source>
        <translation>最小值 – 最大值</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>min</source>
        <translation>最小值</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>median of %1 ranks</source>
        <translation>%1 个 rank 的中位数</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>rank %1: %2%3%</source>
        <translation>rank %1：%2%3%</translation>
    </message>
</context>
<context>
    <name>RunWords</name>
    <message>
        <location filename="../ui/widgets/run_words.cpp" line="+11"/>
        <source>launching</source>
        <translation>启动中</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>launched</source>
        <translation>已启动</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>simulated</source>
        <translation>模拟</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>collected</source>
        <translation>收集</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>adopted</source>
        <translation>已接管</translation>
    </message>
</context>
<context>
    <name>trellis::launcher::document::PlanDocument</name>
    <message>
        <location filename="../launcher/document/plan_document.cpp" line="+71"/>
        <source>Untitled</source>
        <translation>未命名</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Set %1 to %2</source>
        <translation>将 %1 设为 %2</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Remove node %1</source>
        <translation>移除节点 %1</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>deepspeed: not a JSON object (a DeepSpeed config is one)</source>
        <translation>deepspeed：不是 JSON 对象 (DeepSpeed 配置必须是 JSON 对象)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Import DeepSpeed config</source>
        <translation>导入 DeepSpeed 配置</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Import Megatron-LM arguments</source>
        <translation>导入 Megatron-LM 参数</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>the plan has no file yet: use Save As</source>
        <translation>方案还没有文件：请使用“方案另存为”</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Rebase relative paths</source>
        <translation>重新定位相对路径</translation>
    </message>
</context>
<context>
    <name>trellis::ui::CompareView</name>
    <message>
        <location filename="../ui/history/compare_view.cpp" line="+18"/>
        <source>Loss (rank 0)</source>
        <translation>损失 (rank 0)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Throughput (job)</source>
        <translation>吞吐量 (作业)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>tokens/s</source>
        <translation>tokens/s</translation>
    </message>
    <message>
        <source>Trellis — runs compared</source>
        <translation type="vanished">Trellis — 运行对比</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Select two or more runs in the list (Ctrl+click) and press Compare: their losses and throughput overlaid, and a table of what differs.</source>
        <translation>在列表中选择两个或更多运行 (Ctrl+单击) 并点击“比较所选运行”：叠加显示它们的损失和吞吐量，并列出差异表。</translation>
    </message>
    <message>
        <location line="+44"/>
        <source>plan</source>
        <translation>方案</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ranks</source>
        <translation>rank 数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>steps</source>
        <translation>步数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>final loss</source>
        <translation>最终损失</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>tokens/s (job)</source>
        <translation>tokens/s (作业)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>step ms (slowest rank)</source>
        <translation>单步 ms (最慢 rank)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>compute ms</source>
        <translation>计算 ms</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>exposed comm ms</source>
        <translation>未重叠通信 ms</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>bubble ms</source>
        <translation>气泡 ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>idle ms</source>
        <translation>空闲 ms</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>bus GB/s</source>
        <translation>总线带宽 GB/s</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>peak RSS MiB</source>
        <translation>峰值 RSS MiB</translation>
    </message>
    <message>
        <location line="+37"/>
        <source>plan differences</source>
        <translation>方案差异</translation>
    </message>
</context>
<context>
    <name>trellis::ui::EstimatePanel</name>
    <message>
        <location filename="../ui/estimate/estimate_panel.cpp" line="+32"/>
        <location line="+470"/>
        <source>Search plans</source>
        <translation>搜索方案</translation>
    </message>
    <message>
        <location line="-469"/>
        <source>Use selected plan</source>
        <translation>使用所选方案</translation>
    </message>
    <message>
        <location line="+40"/>
        <source>GB a rank</source>
        <translation>每 rank GB</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pipeline stage</source>
        <translation>流水线阶段</translation>
    </message>
    <message>
        <location line="-29"/>
        <source>Memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <location line="+53"/>
        <source>&lt;span style=&apos;color:#1f77b4&apos;&gt;■&lt;/span&gt; forward &amp;nbsp; &lt;span style=&apos;color:#2ca02c&apos;&gt;■&lt;/span&gt; backward &amp;nbsp; &lt;span style=&apos;color:#9467bd&apos;&gt;■&lt;/span&gt; weight gradients &amp;nbsp; &lt;span style=&apos;color:#b0b0b0&apos;&gt;▬&lt;/span&gt; send / receive &amp;nbsp; &lt;span style=&apos;color:#d04040&apos;&gt;▨&lt;/span&gt; idle (bubble) &amp;nbsp; numbers: micro-batches; the wheel zooms, dragging pans, a double click shows the whole step</source>
        <translation>&lt;span style=&apos;color:#1f77b4&apos;&gt;■&lt;/span&gt; 前向 &amp;nbsp; &lt;span style=&apos;color:#2ca02c&apos;&gt;■&lt;/span&gt; 反向 &amp;nbsp; &lt;span style=&apos;color:#9467bd&apos;&gt;■&lt;/span&gt; 权重梯度 &amp;nbsp; &lt;span style=&apos;color:#b0b0b0&apos;&gt;▬&lt;/span&gt; 发送 / 接收 &amp;nbsp; &lt;span style=&apos;color:#d04040&apos;&gt;▨&lt;/span&gt; 空闲 (气泡) &amp;nbsp; 数字：微批次编号；滚轮缩放，拖动平移，双击显示整个单步</translation>
    </message>
    <message>
        <location line="-52"/>
        <source>Timeline</source>
        <translation>时间线</translation>
    </message>
    <message>
        <location line="+183"/>
        <source>Group</source>
        <translation>组</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Operation</source>
        <translation>操作</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>MiB/step</source>
        <translation>MiB/步</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Calls</source>
        <translation>调用次数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ms/step</source>
        <translation>ms/步</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Link</source>
        <translation>链路</translation>
    </message>
    <message>
        <location line="-182"/>
        <source>Collectives</source>
        <translation>集合通信</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compare</source>
        <translation>比较</translation>
    </message>
    <message>
        <location line="+72"/>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>dp</source>
        <translation>dp</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>tp</source>
        <translation>tp</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>pp</source>
        <translation>pp</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>cp</source>
        <translation>cp</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ep</source>
        <translation>ep</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ZeRO</source>
        <translation>ZeRO</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Schedule</source>
        <translation>调度</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>mbs × m</source>
        <translation>mbs × m</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Recompute</source>
        <translation>重计算</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Tokens/s</source>
        <translation>Tokens/s</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>GB</source>
        <translation>GB</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Why</source>
        <translation>原因</translation>
    </message>
    <message>
        <location line="-72"/>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <location line="+143"/>
        <location line="+78"/>
        <source>&lt;i&gt;Estimating… (what is dimmed below belongs to the plan before this edit)&lt;/i&gt;</source>
        <translation>&lt;i&gt;正在估算… (下方变暗的内容属于本次编辑之前的方案)&lt;/i&gt;</translation>
    </message>
    <message numerus="yes">
        <location line="-60"/>
        <source>&lt;b&gt;No estimate:&lt;/b&gt; the plan has %n error(s) (see Problems in the editor). &lt;i&gt;What is dimmed below belongs to an earlier plan.&lt;/i&gt;</source>
        <translation>
            <numerusform>&lt;b&gt;无估算：&lt;/b&gt;方案有 %n 个错误 (见编辑器中的“问题”)。&lt;i&gt;下方变暗的内容属于之前的方案。&lt;/i&gt;</numerusform>
        </translation>
    </message>
    <message>
        <location line="+10"/>
        <source>&lt;b&gt;No estimate:&lt;/b&gt; this plan runs its own trainer (own_trainer.command) and has no model section, so there is nothing to predict memory, communication or step time from. Add a model and a parallel section describing what the script trains to get an estimate; the run is watched either way.</source>
        <translation>&lt;b&gt;无估算：&lt;/b&gt;此计划运行自带的训练程序（own_trainer.command），且没有 model 部分，因此无法预测内存、通信或步时间。添加描述脚本所训练内容的 model 和 parallel 部分即可获得估算；无论如何都会监视该运行。</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>&lt;i&gt;No plan loaded.&lt;/i&gt;</source>
        <translation>&lt;i&gt;未加载方案。&lt;/i&gt;</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>calibrated</source>
        <translation>已校准</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>not calibrated: run trellis-cli calibrate</source>
        <translation>未校准：请运行 trellis-cli calibrate</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>One pipeline stage: no schedule and no bubble. Set pp above 1 to see the pipeline&apos;s timeline.</source>
        <translation>只有一个流水线阶段：没有调度，也没有气泡。将 pp 设为大于 1 即可查看流水线的时间线。</translation>
    </message>
    <message numerus="yes">
        <location line="+8"/>
        <source>measuring this machine for %n rank(s) (once, a few seconds): default rates until then</source>
        <translation>
            <numerusform>正在为 %n 个 rank 测量本机（仅一次，几秒钟）：在此之前使用默认速率</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source>not calibrated (the calibration failed: %1); run trellis-cli calibrate</source>
        <translation>未校准（校准失败：%1）；请运行 trellis-cli calibrate</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>tokens/s</source>
        <translation>tokens/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>step time</source>
        <translation>单步时间</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>stage %1 memory %2%3 GB</source>
        <translation>阶段 %1 内存 %2%3 GB</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 → %2 pipeline stages</source>
        <translation>流水线阶段 %1 → %2</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>&lt;b&gt;%1 tokens/s&lt;/b&gt; &amp;nbsp; step %2 = compute %3 + exposed communication %4 + bubble %5 (%6%)&lt;br&gt;MFU %7 &amp;nbsp; %8 parameters &amp;nbsp; cost %9 a run &amp;nbsp; &lt;small&gt;%10%11&lt;/small&gt;</source>
        <translation>&lt;b&gt;%1 tokens/s&lt;/b&gt; &amp;nbsp; 单步 %2 = 计算 %3 + 未重叠通信 %4 + 气泡 %5 (%6%)&lt;br&gt;MFU %7 &amp;nbsp; 参数量 %8 &amp;nbsp; 每次运行成本 %9 &amp;nbsp; &lt;small&gt;%10%11&lt;/small&gt;</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>n/a (CPU)</source>
        <translation>不适用 (CPU)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 B</source>
        <translation>%1 B</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 M</source>
        <translation>%1 M</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Checkpoints (%1): training waits %2 a save (%3% of the steps between saves); the busiest node writes %4 GB in %5, keeping %6 GB of staging buffers</source>
        <translation>检查点 (%1)：每次保存训练等待 %2 (两次保存之间各步的 %3%)；最忙的节点在 %5 内写入 %4 GB，保留 %6 GB 暂存缓冲区</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>(the write outlasts the steps between saves: one lands every %1 steps)</source>
        <translation>(写入时间超过两次保存之间的步：每 %1 步完成一次)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Since the last estimate: %1</source>
        <translation>相比上次估算：%1</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>activations</source>
        <translation>激活</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>comm buffers</source>
        <translation>通信缓冲区</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>%1 %2 GB</source>
        <translation>%1 %2 GB</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>No data-parallel gradient all-reduce in this plan (one replica, or ZeRO&apos;s reduce-scatters): parallel.allreduce applies to the other all-reduces only.</source>
        <translation>此计划没有数据并行的梯度 all-reduce（只有一个副本，或使用 ZeRO 的 reduce-scatter）：parallel.allreduce 只作用于其他 all-reduce。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;Gradient all-reduce&lt;/b&gt; (%1: %2 ranks on %3 node(s), %4 MiB a call, %5 calls a step)</source>
        <translation>&lt;b&gt;梯度 all-reduce&lt;/b&gt;（%1：%2 个 rank，分布在 %3 个节点，每次调用 %4 MiB，每步 %5 次调用）</translation>
    </message>
    <message>
        <location line="+30"/>
        <source> (stage %1)</source>
        <translation> (阶段 %1)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>inter-node</source>
        <translation>节点间</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>intra-node</source>
        <translation>节点内</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Searching…</source>
        <translation>正在搜索…</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>%1 — not launchable by trellis-trainer yet</source>
        <translation>%1 — trellis-trainer 尚不能启动</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1
trellis-trainer cannot launch it yet: %2</source>
        <translation>%1
trellis-trainer 尚不能启动它：%2</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>No plan fits: more devices, a smaller micro-batch or a smaller model.</source>
        <translation>没有可行的方案：请增加设备、减小微批次或换用更小的模型。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 plans considered, %2 valid, %3 fit</source>
        <translation>共考察 %1 个方案，%2 个有效，%3 个放得下</translation>
    </message>
</context>
<context>
    <name>trellis::ui::HistoryPanel</name>
    <message>
        <source>Compare selected runs</source>
        <translation type="vanished">比较所选运行</translation>
    </message>
    <message>
        <source>Run</source>
        <translation type="vanished">运行</translation>
    </message>
    <message>
        <source>Plan</source>
        <translation type="vanished">方案</translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="vanished">状态</translation>
    </message>
    <message>
        <source>Steps</source>
        <translation type="vanished">步数</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation type="vanished">损失</translation>
    </message>
    <message>
        <location filename="../ui/history/history_panel.cpp" line="+57"/>
        <source>Filter: words, status:failed, tag:baseline, after:2026-11-01, parallel.tp=2, model.preset=llama2-70b</source>
        <translation>筛选：词语、status:failed、tag:baseline、after:2026-11-01、parallel.tp=2、model.preset=llama2-70b</translation>
    </message>
    <message>
        <source>Words match a run&apos;s id, name, note and tags. Terms: status:NAME[,NAME], tag:NAME, after:YYYY-MM-DD, before:YYYY-MM-DD, archived:yes|any, and plan fields by path with = != &lt; &lt;= &gt; &gt;= (parallel.tp=2, training.steps&gt;=1000).</source>
        <translation type="vanished">词语匹配运行的编号、名称、备注和标签。条件：status:名称[,名称]、tag:名称、after:YYYY-MM-DD、before:YYYY-MM-DD、archived:yes|any，以及按路径的计划字段，用 = != &lt; &lt;= &gt; &gt;=（parallel.tp=2、training.steps&gt;=1000）。</translation>
    </message>
    <message>
        <source>Words match a run&apos;s id, name, note and tags. Terms: status:NAME[,NAME], tag:NAME, owner:NAME|me, after:YYYY-MM-DD, before:YYYY-MM-DD, archived:yes|any, and plan fields by path with = != &lt; &lt;= &gt; &gt;= (parallel.tp=2, training.steps&gt;=1000).</source>
        <translation type="vanished">词语匹配运行的编号、名称、备注和标签。条件：status:名称[,名称]、tag:名称、owner:名称|me、after:YYYY-MM-DD、before:YYYY-MM-DD、archived:yes|any，以及按路径的计划字段，用 = != &lt; &lt;= &gt; &gt;=（parallel.tp=2、training.steps&gt;=1000）。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Words match a run&apos;s id, name, note and tags. Terms: status:NAME[,NAME], kind:launched|simulated|collected|adopted, tag:NAME, owner:NAME|me, after:YYYY-MM-DD, before:YYYY-MM-DD, archived:yes|any, and plan fields by path with = != &lt; &lt;= &gt; &gt;= (parallel.tp=2, training.steps&gt;=1000).</source>
        <translation>词语匹配运行的编号、名称、备注和标签。条件：status:名称[,名称]、kind:launched|simulated|collected|adopted、tag:名称、owner:名称|me、after:YYYY-MM-DD、before:YYYY-MM-DD、archived:yes|any，以及按路径的计划字段，用 = != &lt; &lt;= &gt; &gt;=（parallel.tp=2、training.steps&gt;=1000）。</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>Right-click to choose the columns; drag a column to move it; click to sort</source>
        <translation>右键选择列；拖动列以移动；单击排序</translation>
    </message>
    <message>
        <location line="+56"/>
        <source>&amp;Open</source>
        <translation>打开(&amp;O)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open the run&apos;s dashboards in Run mode (a run still going is followed live)</source>
        <translation>在运行模式中打开该运行的仪表盘（仍在进行的运行会实时跟随）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&amp;Compare</source>
        <translation>比较(&amp;C)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Select two or more runs (Ctrl or Shift) to compare them</source>
        <translation>选择两个或更多运行 (按住 Ctrl 或 Shift) 进行比较</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Report…</source>
        <translation>报告(&amp;R)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Write the run&apos;s report (HTML or PDF)</source>
        <translation>写出该运行的报告（HTML 或 PDF）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&amp;Tag…</source>
        <translation>标签(&amp;T)…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Add a tag to the selected runs (Untag in the tag box takes one off)</source>
        <translation>给所选运行加标签（在标签框中以 - 开头则移除）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Note…</source>
        <translation>备注(&amp;N)…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>The run&apos;s note</source>
        <translation>该运行的备注</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Re&amp;name…</source>
        <translation>重命名(&amp;M)…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>The run&apos;s name</source>
        <translation>该运行的名称</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Archive</source>
        <translation>归档(&amp;A)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hide the selected runs from the list (archived:yes shows them)</source>
        <translation>从列表中隐藏所选运行（archived:yes 显示它们）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Unarchive</source>
        <translation>取消归档</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Delete…</source>
        <translation>删除(&amp;D)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+29"/>
        <source>Delete the selected runs&apos; rows and folders, after saying what goes</source>
        <translation>先说明将删除的内容，再删除所选运行的记录和文件夹</translation>
    </message>
    <message>
        <location line="-27"/>
        <source>Launch &amp;again</source>
        <translation>再次启动(&amp;G)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open the run&apos;s plan as a new plan and launch it</source>
        <translation>将该运行的计划作为新计划打开并启动</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>1 run</source>
        <translation>1 个运行</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 runs</source>
        <translation>%1 个运行</translation>
    </message>
    <message>
        <location line="+62"/>
        <source>Default columns</source>
        <translation>默认列</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>The filter does not apply: %1</source>
        <translation>筛选无法应用：%1</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Tag refused: %1</source>
        <translation>标签被拒绝：%1</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Note refused: %1</source>
        <translation>备注被拒绝：%1</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Name refused: %1</source>
        <translation>名称被拒绝：%1</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Run %1 is still %2: stop it before deleting it</source>
        <translation>运行 %1 仍处于 %2：删除前请先停止</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>• %1 (%2): its rows in the history</source>
        <translation>• %1（%2）：其在历史中的记录</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>• %1 (%2): its rows in the history and %3</source>
        <translation>• %1（%2）：其在历史中的记录以及 %3</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Select the runs to delete</source>
        <translation>选择要删除的运行</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Delete runs</source>
        <translation>删除运行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>This deletes, and cannot be undone:

%1

Archive keeps a run but hides it.</source>
        <translation>将删除以下内容，且无法撤销：

%1

归档会保留运行但将其隐藏。</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Tag runs</source>
        <translation>给运行加标签</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Tag (letters, digits, . _ - + : / = @; a leading - takes it off):</source>
        <translation>标签（字母、数字、. _ - + : / = @；以 - 开头则移除）：</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Note</source>
        <translation>备注</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Note on run %1 (up to 4000 characters):</source>
        <translation>运行 %1 的备注（最多 4000 个字符）：</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Rename run</source>
        <translation>重命名运行</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Name of run %1:</source>
        <translation>运行 %1 的名称：</translation>
    </message>
</context>
<context>
    <name>trellis::ui::LaunchDialog</name>
    <message>
        <location filename="../ui/run/launch_dialog.cpp" line="+30"/>
        <source>Launch %1</source>
        <translation>启动 %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Target:</source>
        <translation>目标：</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>SSH nodes of the plan</source>
        <translation>计划中的 SSH 节点</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Slurm cluster (a batch job)</source>
        <translation>Slurm 集群（批处理作业）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>This machine</source>
        <translation>本机</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Check</source>
        <translation>检查</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Detail</source>
        <translation>详情</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Launch</source>
        <translation>启动</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Check again</source>
        <translation>重新检查</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Accept host key…</source>
        <translation>接受主机密钥…</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>Checking the hosts…</source>
        <translation>正在检查主机…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Asking the Slurm cluster…</source>
        <translation>正在询问 Slurm 集群…</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>Checked %1 of %2…</source>
        <translation>已检查 %1 / %2…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checked %1 of %2 hosts…</source>
        <translation>已检查 %1/%2 台主机…</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>ok</source>
        <translation>正常</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>FAILED</source>
        <translation>失败</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 — fix: %2</source>
        <translation>%1 — 解决：%2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>(this machine)</source>
        <translation>（本机）</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>The key was not accepted: %1</source>
        <translation>未接受该密钥：%1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Every check passed: the run can start.</source>
        <translation>所有检查均通过：可以开始运行。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A check failed: nothing will start until it is fixed (each row says how).</source>
        <translation>有检查未通过：修复之前不会启动任何进程（每行给出解决方法）。</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Accept host key</source>
        <translation>接受主机密钥</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 shows the key %2.

Compare it with the host&apos;s own key (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on that host) before accepting: a key you did not check could belong to someone in between.

Add it to the known hosts?</source>
        <translation>%1 出示的密钥为 %2。

接受之前，请将其与该主机自身的密钥比对（在该主机上运行 ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub）：未经核对的密钥可能属于中间人。

将其加入已知主机？</translation>
    </message>
</context>
<context>
    <name>trellis::ui::MainWindow</name>
    <message>
        <location filename="../ui/workspace/main_window.cpp" line="+85"/>
        <source>Trellis</source>
        <translation>Trellis</translation>
    </message>
    <message>
        <source>Edit plan</source>
        <translation type="vanished">编辑方案</translation>
    </message>
    <message>
        <source>Mesh</source>
        <translation type="vanished">设备网格</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window_modes.cpp" line="+48"/>
        <location line="+94"/>
        <source>Plan</source>
        <translation>方案</translation>
    </message>
    <message>
        <location line="-95"/>
        <source>Estimate</source>
        <translation>估算</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window.cpp" line="+32"/>
        <source>Not changed: %1</source>
        <translation>未更改：%1</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Use pinned plan</source>
        <translation>使用已固定的方案</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window_document.cpp" line="+98"/>
        <location line="+11"/>
        <source>Run history</source>
        <translation>运行历史</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window_modes.cpp" line="+45"/>
        <source>all ranks</source>
        <translation>所有 rank</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>mpirun and workbench</source>
        <translation>mpirun 和工作台</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>Rank output</source>
        <translation>rank 输出</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window.cpp" line="+8"/>
        <source>Loss, grad norm, learning rate</source>
        <translation>损失、梯度范数、学习率</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Throughput and step time</source>
        <translation>吞吐量与单步时间</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>Step %1 marked on the charts</source>
        <translation>已在图表中标记第 %1 步</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window_history.cpp" line="+73"/>
        <source>Report written to %1</source>
        <translation>报告已写入 %1</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window.cpp" line="+28"/>
        <location line="+91"/>
        <location line="+271"/>
        <source>Run %1: %2</source>
        <translation>运行 %1：%2</translation>
    </message>
    <message>
        <location line="-346"/>
        <source>Run %1: restarting (attempt %2)</source>
        <translation>运行 %1：正在重启 (第 %2 次尝试)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>[supervisor] %1</source>
        <translation>[supervisor] %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Restarting: %1</source>
        <translation>正在重启：%1</translation>
    </message>
    <message>
        <location line="+74"/>
        <location line="+2"/>
        <source>following</source>
        <translation>跟踪中</translation>
    </message>
    <message>
        <location line="-4"/>
        <location line="+4"/>
        <source>from the history</source>
        <translation>来自历史记录</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>[workbench] following run %1 (supervisor pid %2)</source>
        <translation>[workbench] 正在跟踪运行 %1 (监管进程 pid %2)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>[workbench] run %1 is not supervised any more; showing the history</source>
        <translation>[workbench] 运行 %1 已不再受监管；显示历史记录</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>[workbench] run %1 had lost its supervisor; a new one (pid %2) adopts it</source>
        <translation>[workbench] 运行 %1 已失去监管进程；由新的监管进程 (pid %2) 接管</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Run %1: adopting</source>
        <translation>运行 %1：正在接管</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Reattached to run %1, still going</source>
        <translation>已重新连接到运行 %1，仍在进行中</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reattached to run %1; %2 runs are going (Run › Attach to a running run)</source>
        <translation>已重新连接到运行 %1；共有 %2 个运行正在进行 (运行 › 连接到正在进行的运行)</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>No run of this history is going now</source>
        <translation>此历史记录中当前没有正在进行的运行</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Attach to a running run</source>
        <translation>连接到正在进行的运行</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Runs going now:</source>
        <translation>正在进行的运行：</translation>
    </message>
    <message>
        <location line="+7"/>
        <location filename="../ui/workspace/main_window_modes.cpp" line="+53"/>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <location line="-200"/>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Throughput</source>
        <translation>吞吐量</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Step time</source>
        <translation>单步时间</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pipeline</source>
        <translation>流水线</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Communication</source>
        <translation>通信</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Experts</source>
        <translation>专家</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Health</source>
        <translation>健康状况</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Events</source>
        <translation>事件</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>step %1</source>
        <translation>第 %1 步</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window_modes.cpp" line="-9"/>
        <source>Modes</source>
        <translation>模式</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Start</source>
        <translation>开始</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>History</source>
        <translation>历史记录</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 mode (Ctrl+%2)</source>
        <translation>“%1”模式 (Ctrl+%2)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Reset the dashboard layout</source>
        <translation>重置仪表板布局</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reset zoom of the step charts</source>
        <translation>重置按步图表的缩放</translation>
    </message>
    <message>
        <location line="+15"/>
        <source> · run %1 (%2)</source>
        <translation> · 运行 %1 (%2)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1[*]%2 — Trellis</source>
        <translation>%1[*]%2 — Trellis</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Plan: %1%2</source>
        <translation>方案：%1%2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 · no run open</source>
        <translation>%1 · 未打开运行</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 · Run: %2, %3</source>
        <translation>%1 · 运行：%2，%3</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window_history.cpp" line="-16"/>
        <source>Run %1 opened: its dashboards are in Run mode (Ctrl+3)</source>
        <translation>已打开运行 %1：其仪表板位于“运行”模式 (Ctrl+3)</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>No run open</source>
        <translation>未打开运行</translation>
    </message>
    <message>
        <location line="+61"/>
        <source>Select a run to see its summary here; select two or more and press Compare to set them side by side.</source>
        <translation>选择一个运行可在此查看其概要；选择两个或更多并按比较可并排查看。</translation>
    </message>
    <message>
        <location line="+38"/>
        <source>run %1 is being followed (its records go to %2): switch once it has ended</source>
        <translation>正在跟踪运行 %1（其记录写入 %2）：请在其结束后再切换</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the workbench listens for jobs into %1: stop listening first</source>
        <translation>工作台正在为 %1 监听作业：请先停止监听</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>[workbench] run history: %1</source>
        <translation>[工作台] 运行历史：%1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run history: %1</source>
        <translation>运行历史：%1</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>A run is being followed: launch again when it has ended</source>
        <translation>正在跟随一个运行：请在其结束后再次启动</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Reading the run&apos;s plan from the history: it launches when read</source>
        <translation>正在从历史中读取该运行的计划：读取后即启动</translation>
    </message>
    <message>
        <source>The run&apos;s plan is still being read from the history; try again in a moment</source>
        <translation type="vanished">仍在从历史中读取该运行的计划；请稍后再试</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The run&apos;s recorded plan cannot be read: %1</source>
        <translation>无法读取该运行记录的计划：%1</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window.cpp" line="+19"/>
        <source>Run %1: %2 (a job Trellis did not launch: watched, not stopped, from here)</source>
        <translation>运行 %1：%2（非 Trellis 启动的作业：此处只能观察，不能停止）</translation>
    </message>
    <message>
        <location line="+94"/>
        <source>following a job Trellis did not launch</source>
        <translation>正在跟踪一个非 Trellis 启动的作业</translation>
    </message>
    <message>
        <location line="+65"/>
        <source>Launch</source>
        <translation>启动</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Asked the supervisor to stop run %1</source>
        <translation>已请求监管进程停止运行 %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Attach…</source>
        <translation>连接…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Follow a run that is going now (runs outlive this window)</source>
        <translation>跟踪正在进行的运行 (关闭此窗口后运行仍会继续)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Export report…</source>
        <translation>导出报告…</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+49"/>
        <location line="+15"/>
        <source>Listen for jobs…</source>
        <translation>监听作业…</translation>
    </message>
    <message>
        <location line="-58"/>
        <source>Listen for jobs</source>
        <translation>监听作业</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Jobs Trellis did not launch (sbatch, torchrun, mpirun by hand) report to this address; each becomes a run here:</source>
        <translation>非 Trellis 启动的作业（sbatch、torchrun、手动 mpirun）向此地址汇报；每个作业在此成为一次运行：</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Watch jobs Trellis did not launch: they report here with two environment variables</source>
        <translation>观察非 Trellis 启动的作业：它们通过两个环境变量向此处汇报</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Stop listening</source>
        <translation>停止监听</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>[workbench] starting a collector (pid %1) on %2; its log: %3</source>
        <translation>[workbench] 正在 %2 上启动收集器（pid %1）；其日志：%3</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>[workbench] stopped listening for jobs (collector pid %1)</source>
        <translation>[workbench] 已停止监听作业（收集器 pid %1）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stopped listening for jobs</source>
        <translation>已停止监听作业</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>the collector ended (see %1)</source>
        <translation>收集器已结束（见 %1）</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>[workbench] listening for jobs at %1; give each job: TRELLIS_COLLECTOR=%1 TRELLIS_COLLECTOR_KEYS=%2</source>
        <translation>[workbench] 正在 %1 监听作业；请为每个作业设置：TRELLIS_COLLECTOR=%1 TRELLIS_COLLECTOR_KEYS=%2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Listening for jobs at %1</source>
        <translation>正在 %1 监听作业</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Jobs report with TRELLIS_COLLECTOR=%1 TRELLIS_COLLECTOR_KEYS=%2; click to stop listening</source>
        <translation>作业通过 TRELLIS_COLLECTOR=%1 TRELLIS_COLLECTOR_KEYS=%2 汇报；点击停止监听</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Following run %1, a job Trellis did not launch</source>
        <translation>正在跟踪运行 %1，一个非 Trellis 启动的作业</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Trellis did not launch this job: stop it with its own launcher (scancel, kill, torchrun)</source>
        <translation>此作业并非由 Trellis 启动：请用它自己的启动器停止（scancel、kill、torchrun）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop the run</source>
        <translation>停止运行</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>This plan can be estimated but not run yet</source>
        <translation>此方案可以估算，但暂时无法运行</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Launch failed: the plan records its runs in %1, and the workbench cannot switch to it: %2</source>
        <translation>启动失败：计划将运行记录在 %1，而工作台无法切换过去：%2</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>[workbench] the plan records its runs in %1 (telemetry.history)</source>
        <translation>[工作台] 计划将运行记录在 %1（telemetry.history）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Launch failed: %1</source>
        <translation>启动失败：%1</translation>
    </message>
    <message>
        <location line="-10"/>
        <location line="+11"/>
        <location line="+1"/>
        <source>Launch failed</source>
        <translation>启动失败</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>[workbench] run %1: supervisor pid %2, log %3</source>
        <translation>[workbench] 运行 %1：监管进程 pid %2，日志 %3</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Run %1: launching</source>
        <translation>运行 %1：正在启动</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>launching</source>
        <translation>正在启动</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>[alert: %1] %2</source>
        <translation>[alert: %1] %2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Alert (%1): %2</source>
        <translation>告警 (%1)：%2</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Trellis: %1</source>
        <translation>Trellis：%1</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Run failed (exit %1): %2</source>
        <translation>运行失败 (退出码 %1)：%2</translation>
    </message>
    <message>
        <source>Run failed</source>
        <translation type="vanished">运行失败</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Select a run in the history first</source>
        <translation>请先在历史记录中选择一个运行</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Export report</source>
        <translation>导出报告</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>HTML (*.html)</source>
        <translation>HTML (*.html)</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>rank %1</source>
        <translation>rank %1</translation>
    </message>
    <message>
        <location filename="../ui/workspace/main_window_document.cpp" line="-42"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;New plan</source>
        <translation>新建方案(&amp;N)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Open plan…</source>
        <translation>打开方案(&amp;O)…</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Open plan</source>
        <translation>打开方案</translation>
    </message>
    <message>
        <location line="+0"/>
        <location line="+249"/>
        <source>Plans (*.json)</source>
        <translation>方案 (*.json)</translation>
    </message>
    <message>
        <location line="-245"/>
        <source>Open &amp;recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Save plan</source>
        <translation>保存方案(&amp;S)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Save plan &amp;as…</source>
        <translation>方案另存为(&amp;A)…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Import</source>
        <translation>导入(&amp;I)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Run &amp;history…</source>
        <translation>运行历史(&amp;H)…</translation>
    </message>
    <message>
        <source>The run history this workbench opens from its next start: a file, or a team&apos;s PostgreSQL database as postgresql://USER@HOST/DBNAME (the password from ~/.pgpass, PGPASSWORD or a service file). Empty: %1.
Now: %2</source>
        <translation type="vanished">工作台下次启动时打开的运行历史：一个文件，或团队的 PostgreSQL 数据库 postgresql://用户@主机/数据库名（密码来自 ~/.pgpass、PGPASSWORD 或服务文件）。留空：%1。
当前：%2</translation>
    </message>
    <message>
        <source>From its next start the workbench opens %1 (--db and TRELLIS_HISTORY come first)</source>
        <translation type="vanished">工作台下次启动时将打开 %1（--db 和 TRELLIS_HISTORY 优先）</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>Cannot read %1 (or it is over %2 MiB)</source>
        <translation>无法读取 %1 (或其大小超过 %2 MiB)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>DeepSpeed config file…</source>
        <translation>DeepSpeed 配置文件…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Import a DeepSpeed config</source>
        <translation>导入 DeepSpeed 配置</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>JSON (*.json);;All files (*)</source>
        <translation>JSON (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Megatron-LM arguments (paste)…</source>
        <translation>Megatron-LM 参数 (粘贴)…</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+8"/>
        <source>Import Megatron-LM arguments</source>
        <translation>导入 Megatron-LM 参数</translation>
    </message>
    <message>
        <location line="-7"/>
        <source>The launch line or its arguments (continuations, comments and torchrun&apos;s own options are understood):</source>
        <translation>启动命令行或其参数 (支持续行、注释以及 torchrun 自身的选项)：</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Megatron-LM arguments file…</source>
        <translation>Megatron-LM 参数文件…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>All files (*)</source>
        <translation>所有文件 (*)</translation>
    </message>
    <message>
        <location line="-65"/>
        <source>E&amp;xport plan as</source>
        <translation>将方案导出为(&amp;X)</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>The run history this workbench reads, now and from its next start: a file, or a team&apos;s PostgreSQL database as postgresql://USER@HOST/DBNAME (the password from ~/.pgpass, PGPASSWORD or a service file). Empty: %1.
Now: %2</source>
        <translation>此工作台读取的运行历史，从现在起并在下次启动时生效：一个文件，或团队的 PostgreSQL 数据库 postgresql://USER@HOST/DBNAME（密码来自 ~/.pgpass、PGPASSWORD 或服务文件）。留空：%1。
当前：%2</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Not switched now: %1. From its next start the workbench opens %2</source>
        <translation>现在未切换：%1。下次启动时工作台将打开 %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Run history: %1 (from the next start too, unless --db or TRELLIS_HISTORY name another)</source>
        <translation>运行历史：%1（下次启动也是，除非 --db 或 TRELLIS_HISTORY 指定了其他）</translation>
    </message>
    <message>
        <location line="+43"/>
        <source>Wrote %1</source>
        <translation>已写入 %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Could not write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>DeepSpeed config…</source>
        <translation>DeepSpeed 配置…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Export as a DeepSpeed config</source>
        <translation>导出为 DeepSpeed 配置</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Megatron-LM arguments…</source>
        <translation>Megatron-LM 参数…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Export as Megatron-LM arguments</source>
        <translation>导出为 Megatron-LM 参数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Text (*.txt *.sh);;All files (*)</source>
        <translation>文本 (*.txt *.sh);;所有文件 (*)</translation>
    </message>
    <message>
        <location line="-81"/>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location line="+87"/>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Undo</source>
        <translation>撤销(&amp;U)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Redo</source>
        <translation>重做(&amp;R)</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>&amp;Settings</source>
        <translation>设置(&amp;S)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <location line="+6"/>
        <location line="+13"/>
        <source>System default</source>
        <translation>系统默认</translation>
    </message>
    <message>
        <location line="-6"/>
        <source>The language changes the next time Trellis starts.</source>
        <translation>语言将在下次启动 Trellis 时更改。</translation>
    </message>
    <message>
        <source>%1[*] — Trellis</source>
        <translation type="vanished">%1[*] — Trellis</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&amp;Theme</source>
        <translation>主题(&amp;T)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>The theme changes the next time Trellis starts.</source>
        <translation>主题将在下次启动 Trellis 时更改。</translation>
    </message>
    <message>
        <location line="+44"/>
        <source>The plan has errors: fix them to launch (see Problems)</source>
        <translation>方案有错误：修复后才能启动 (见“问题”)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run the plan on this machine (Ctrl+R)</source>
        <translation>在本机运行此方案 (Ctrl+R)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>This plan can be estimated but not run yet:
%1</source>
        <translation>此方案可以估算，但暂时无法运行：
%1</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Not opened: %1: %2</source>
        <translation>未打开：%1：%2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Cannot open the plan</source>
        <translation>无法打开方案</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 was not opened; the open plan is unchanged.

%2</source>
        <translation>未打开 %1；当前打开的方案保持不变。

%2</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Opened %1 — it has problems to fix before it can run</source>
        <translation>已打开 %1 — 运行前需要先修复其中的问题</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Opened %1</source>
        <translation>已打开 %1</translation>
    </message>
    <message>
        <location line="+22"/>
        <location line="+7"/>
        <source>Saved %1</source>
        <translation>已保存 %1</translation>
    </message>
    <message>
        <location line="-7"/>
        <location line="+7"/>
        <source>Not saved: %1</source>
        <translation>未保存：%1</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Save plan</source>
        <translation>保存方案</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Unsaved changes</source>
        <translation>未保存的更改</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The plan %1 has changes that are not saved.</source>
        <translation>方案 %1 有尚未保存的更改。</translation>
    </message>
    <message>
        <location line="+38"/>
        <source>DeepSpeed config</source>
        <translation>DeepSpeed 配置</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Megatron-LM arguments</source>
        <translation>Megatron-LM 参数</translation>
    </message>
    <message numerus="yes">
        <location line="+6"/>
        <source>Imported the %1 (Edit › Undo to go back); %n warning(s)</source>
        <translation>
            <numerusform>已导入 %1 (可通过“编辑 › 撤销”撤回)；%n 条警告</numerusform>
        </translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Not imported (the plan is unchanged): %1</source>
        <translation>未导入 (方案未更改)：%1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Imported the %1</source>
        <translation>已导入 %1</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>The %1 were not imported</source>
        <translation>%1 未导入</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Imported, with these notes:</source>
        <translation>已导入，附带以下说明：</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>The plan is unchanged:</source>
        <translation>方案未更改：</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Apply searched plan (dp %1 · tp %2 · pp %3 · cp %4)</source>
        <translation>应用搜索到的方案 (dp %1 · tp %2 · pp %3 · cp %4)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Using the searched plan (Edit › Undo to go back): dp %1 · tp %2 · pp %3 · cp %4</source>
        <translation>正在使用搜索到的方案 (可通过“编辑 › 撤销”撤回)：dp %1 · tp %2 · pp %3 · cp %4</translation>
    </message>
</context>
<context>
    <name>trellis::ui::MeshView</name>
    <message>
        <location filename="../ui/plan/mesh_view.cpp" line="+43"/>
        <source>pipeline stage</source>
        <translation>流水线阶段</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tensor-parallel rank</source>
        <translation>张量并行 rank</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>context-parallel rank</source>
        <translation>上下文并行 rank</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>data-parallel replica</source>
        <translation>数据并行副本</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>expert-parallel rank</source>
        <translation>专家并行 rank</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>node</source>
        <translation>节点</translation>
    </message>
    <message>
        <location line="+339"/>
        <source>rank %1 on %2</source>
        <translation>rank %1 位于 %2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tp %1 · cp %2 · dp %3 · pp %4</source>
        <translation>tp %1 · cp %2 · dp %3 · pp %4</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>tensor-parallel group: %1</source>
        <translation>张量并行组：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>context-parallel group: %1</source>
        <translation>上下文并行组：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>data-parallel group: %1</source>
        <translation>数据并行组：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>expert-parallel group: %1</source>
        <translation>专家并行组：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>pipeline group: %1</source>
        <translation>流水线并行组：%1</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>%1 · %2 slots · %3</source>
        <translation>%1 · %2 个槽位 · %3</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>
no ranks (idle)</source>
        <translation>
无 rank (空闲)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>
ranks %1</source>
        <translation>
rank %1</translation>
    </message>
    <message numerus="yes">
        <location line="+2"/>
        <source> (%n slot(s) idle)</source>
        <translation>
            <numerusform> (%n 个槽位空闲)</numerusform>
        </translation>
    </message>
    <message>
        <location line="+9"/>
        <source>
stage %1 · tp %2 · cp %3 · dp %4</source>
        <translation>
阶段 %1 · tp %2 · cp %3 · dp %4</translation>
    </message>
    <message>
        <location filename="../ui/plan/mesh_view_paint.cpp" line="+35"/>
        <source>colour: %1</source>
        <translation>着色：%1</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>one tile a node, one stripe a rank (zoom in for ranks)</source>
        <translation>每个节点一个方块，每个 rank 一条色带 (放大可查看各 rank)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>outlines: tensor-parallel groups (red: spans nodes)</source>
        <translation>轮廓：张量并行组 (红色：跨节点)</translation>
    </message>
    <message>
        <location line="+154"/>
        <source>No plan loaded</source>
        <translation>未加载方案</translation>
    </message>
</context>
<context>
    <name>trellis::ui::PlanPanel</name>
    <message>
        <location filename="../ui/plan/plan_panel.cpp" line="+30"/>
        <source>Setting</source>
        <translation>设置项</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Document</source>
        <translation>文档</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;&lt;small&gt;%2&lt;/small&gt;</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;&lt;small&gt;%2&lt;/small&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>(unnamed plan)</source>
        <translation>(未命名方案)</translation>
    </message>
    <message numerus="yes">
        <location line="+6"/>
        <source>Estimate only: trellis-trainer cannot run this plan yet (%n reason(s); hover for them)</source>
        <translation>
            <numerusform>仅可估算：trellis-trainer 暂时无法运行此方案 (%n 个原因；悬停查看)</numerusform>
        </translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>preset</source>
        <translation>预设</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>architecture</source>
        <translation>架构</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>experts</source>
        <translation>专家</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1, top %2</source>
        <translation>%1，top %2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>layers × hidden</source>
        <translation>层数 × 隐藏维度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>heads (kv)</source>
        <translation>头数 (kv)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ffn</source>
        <translation>ffn</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>sequence</source>
        <translation>序列长度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>vocabulary</source>
        <translation>词表</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Parallelism</source>
        <translation>并行策略</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ranks</source>
        <translation>rank 数</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>expert parallel</source>
        <translation>专家并行</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>schedule</source>
        <translation>调度</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>, %1 virtual stages</source>
        <translation>，%1 个虚拟阶段</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>recompute</source>
        <translation>重计算</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ZeRO stage</source>
        <translation>ZeRO 阶段</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>micro-batch</source>
        <translation>微批次</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 × %2 micro-batches</source>
        <translation>%1 × %2 个微批次</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>global batch</source>
        <translation>全局批次</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 sequences</source>
        <translation>%1 条序列</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cluster</source>
        <translation>集群</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 slots, %2</source>
        <translation>%1 个槽位，%2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>steps</source>
        <translation>步数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 → %2, warm-up %3</source>
        <translation>%1 → %2，预热 %3</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>data</source>
        <translation>数据</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>seed</source>
        <translation>随机种子</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>&lt;b&gt;Plan not loaded&lt;/b&gt;&lt;br&gt;&lt;small&gt;%1&lt;/small&gt;</source>
        <translation>&lt;b&gt;方案未加载&lt;/b&gt;&lt;br&gt;&lt;small&gt;%1&lt;/small&gt;</translation>
    </message>
</context>
<context>
    <name>trellis::ui::RunHeader</name>
    <message>
        <source>Loss</source>
        <translation type="vanished">损失</translation>
    </message>
    <message>
        <source>loss</source>
        <translation type="vanished">损失</translation>
    </message>
    <message>
        <source>Throughput per rank</source>
        <translation type="vanished">每 rank 吞吐量</translation>
    </message>
    <message>
        <source>tokens/s</source>
        <translation type="vanished">tokens/s</translation>
    </message>
    <message>
        <source>No run</source>
        <translation type="vanished">无运行</translation>
    </message>
    <message>
        <location filename="../ui/run/run_header.cpp" line="+19"/>
        <source>No run open: launch the plan (Ctrl+R) or open a run from the history.</source>
        <translation>未打开运行：启动方案 (Ctrl+R) 或从历史记录中打开一个运行。</translation>
    </message>
    <message>
        <location line="+75"/>
        <source>step %1 / %2 · loss %3 · %4 tokens/s · step %5 ms · %6 ranks</source>
        <translation>第 %1 / %2 步 · 损失 %3 · %4 tokens/s · 单步 %5 ms · %6 个 rank</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Run %1: %2</source>
        <translation>运行 %1：%2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 steps · final loss %2 · %3 ranks</source>
        <translation>%1 步 · 最终损失 %2 · %3 个 rank</translation>
    </message>
</context>
<context>
    <name>trellis::ui::RunSummaryView</name>
    <message>
        <location filename="../ui/history/run_summary_view.cpp" line="+20"/>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Events</source>
        <translation>事件</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Select a run to see its summary here; select two or more and press Compare to set them side by side.</source>
        <translation>选择一个运行可在此查看其概要；选择两个或更多并按比较可并排查看。</translation>
    </message>
    <message>
        <location line="+49"/>
        <source>plan %1</source>
        <translation>计划 %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>1 rank</source>
        <translation>1 个 rank</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 ranks</source>
        <translation>%1 个 rank</translation>
    </message>
    <message>
        <location line="-18"/>
        <source>%1, launched from %2</source>
        <translation>%1，由 %2 启动</translation>
    </message>
    <message>
        <location line="-7"/>
        <source>%1, %2</source>
        <translation>%1，%2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>collected, watched from %1</source>
        <translation>收集，由 %1 监视</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>simulated ranks, from %1</source>
        <translation>模拟的 rank，来自 %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1, adopted by %2</source>
        <translation>%1，由 %2 接管</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>step %1 of %2</source>
        <translation>第 %1 步，共 %2 步</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>final loss %1</source>
        <translation>最终损失 %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 tokens/s</source>
        <translation>%1 tokens/s</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>MFU %1%</source>
        <translation>MFU %1%</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>started %1</source>
        <translation>开始于 %1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Tags: %1</source>
        <translation>标签：%1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Recorded by %1</source>
        <translation>记录者：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Files: %1 on %2</source>
        <translation>文件：%2 上的 %1</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>model %1 · %2</source>
        <translation>模型 %1 · %2</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>(no events)</source>
        <translation>（无事件）</translation>
    </message>
</context>
<context>
    <name>trellis::ui::RunTableModel</name>
    <message>
        <location filename="../ui/history/run_table_model.cpp" line="+102"/>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Started</source>
        <translation>开始时间</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Duration</source>
        <translation>时长</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Plan</source>
        <translation>计划</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Ranks</source>
        <translation>Rank 数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Layout</source>
        <translation>布局</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Steps</source>
        <translation>步数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Final loss</source>
        <translation>最终损失</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tokens/s</source>
        <translation>Tokens/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MFU</source>
        <translation>MFU</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Host or target</source>
        <translation>主机或目标</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tags</source>
        <translation>标签</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Note</source>
        <translation>备注</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>%1 (archived)</source>
        <translation>%1（已归档）</translation>
    </message>
</context>
<context>
    <name>trellis::ui::TimelineChart</name>
    <message>
        <location filename="../ui/widgets/timeline_chart.cpp" line="+109"/>
        <source>No timeline yet.</source>
        <translation>暂无时间线。</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Predicted by the schedule simulator: %1 ms, bubble %2%</source>
        <translation>调度模拟器预测：%1 ms，气泡 %2%</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Measured, step %1: %2 ms, bubble %3%</source>
        <translation>实测，第 %1 步：%2 ms，气泡 %3%</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>  (zoom ×%1; double-click for the whole step)</source>
        <translation>  (缩放 ×%1；双击显示整个单步)</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>%1 (%2%)</source>
        <translation>%1 (%2%)</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>%1 · micro-batch %2 · chunk %3
%4 – %5 ms</source>
        <translation>%1 · 微批次 %2 · 块 %3
%4 – %5 ms</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1: idle (bubble) at %2 ms</source>
        <translation>%1：%2 ms 处空闲 (气泡)</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::BreakdownPanel</name>
    <message>
        <location filename="../ui/dashboards/breakdown_panel.cpp" line="+22"/>
        <source>compute</source>
        <translation>计算</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>exposed communication</source>
        <translation>未重叠通信</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pipeline bubble</source>
        <translation>流水线气泡</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>Step time breakdown (median rank)</source>
        <translation type="vanished">单步时间分解 (中位 rank)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>checkpoint (between steps)</source>
        <translation>检查点 (步与步之间)</translation>
    </message>
    <message>
        <location line="+50"/>
        <source>Checkpoints: %1 ms a save (%2% of a step)</source>
        <translation>检查点：每次保存 %1 ms (一步的 %2%)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source> · written in %1 ms</source>
        <translation> · 写入用时 %1 ms</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> · steps beside a write %1%2%</source>
        <translation> · 写入期间的步 %1%2%</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Checkpoints put in place: %4; training waited %1 ms a save (%2% of a step, at most %3 ms)</source>
        <translation>已完成的检查点：%4；每次保存训练等待 %1 ms (一步的 %2%，最多 %3 ms)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>; each written in %1 ms</source>
        <translation>；每次写入用时 %1 ms</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>; steps beside a background write %1% slower (%2 of %3 steps)</source>
        <translation>；后台写入期间的步慢 %1% (%3 步中的 %2 步)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>; steps beside a background write %1% faster (%2 of %3 steps)</source>
        <translation>；后台写入期间的步快 %1% (%3 步中的 %2 步)</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>ms</source>
        <translation>ms</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>over steps (median rank)</source>
        <translation>按步 (中位 rank)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>per pipeline stage (latest steps)</source>
        <translation>按流水线阶段 (最近若干步)</translation>
    </message>
    <message>
        <location line="+50"/>
        <source>predicted step (calibrated)</source>
        <translation>预测单步时间 (已校准)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>predicted step (default rates)</source>
        <translation>预测单步时间 (默认速率)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>bubble % measured (right axis)</source>
        <translation>气泡 % 实测 (右轴)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>bubble % predicted</source>
        <translation>气泡 % 预测</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>pipeline stage (no coordinates reported yet)</source>
        <translation>流水线阶段 (尚未上报坐标)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>pipeline stage</source>
        <translation>流水线阶段</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>bubble % of the step</source>
        <translation>气泡占单步的 %</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Launch the plan to see where each step&apos;s time goes: compute, exposed communication, pipeline bubble and idle time (the median rank, or each pipeline stage).</source>
        <translation>启动方案即可查看每一步的时间花在哪里：计算、未重叠通信、流水线气泡和空闲时间 (中位 rank，或各流水线阶段)。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Waiting for the ranks&apos; step-time breakdown (it comes with their step reports).</source>
        <translation>等待各 rank 的单步时间分解 (随其每步上报一同到达)。</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/breakdown_panel.h" line="+26"/>
        <source>Step time breakdown</source>
        <translation>单步时间分解</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::CommunicationPanel</name>
    <message>
        <location filename="../ui/dashboards/communication_panel.cpp" line="+22"/>
        <source>group</source>
        <translation>组</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>operation</source>
        <translation>操作</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ranks</source>
        <translation>rank 数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>MB</source>
        <translation>MB</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ms</source>
        <translation>ms</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>bus GB/s</source>
        <translation>总线带宽 GB/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>slowest rank (GB/s)</source>
        <translation>最慢 rank (GB/s)</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>dp traffic: %1</source>
        <translation>dp 通信量：%1</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>%1 (%2% of peak)</source>
        <translation>%1 (峰值的 %2%)</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Launch the plan to see each collective (group, operation, bytes, time, bus bandwidth) and its slowest rank.</source>
        <translation>启动方案即可查看每个集合通信操作 (组、操作、字节数、时间、总线带宽) 及其最慢的 rank。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>This run has one rank: nothing to communicate.</source>
        <translation>此运行只有一个 rank：无需通信。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>No collective reported yet.</source>
        <translation>尚未上报任何集合通信。</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/communication_panel.h" line="+16"/>
        <source>Communication</source>
        <translation>通信</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::EventsPanel</name>
    <message>
        <location filename="../ui/dashboards/events_panel.cpp" line="+15"/>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>rank</source>
        <translation>rank</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>message</source>
        <translation>消息</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>Launch the plan to see the run&apos;s events here: stragglers, hangs, restarts, checkpoints and alerts, each with its step (click one to mark it on the charts).</source>
        <translation>启动方案即可在此查看运行的事件：掉队 rank、挂起、重启、检查点和告警，每个事件都附有其所在的步 (单击某个事件可在图表中标记它)。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>No events in this run: no straggler, hang, restart or alert so far.</source>
        <translation>此运行中没有事件：目前没有掉队 rank、挂起、重启或告警。</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/events_panel.h" line="+15"/>
        <source>Events</source>
        <translation>事件</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::ExpertsPanel</name>
    <message>
        <location filename="../ui/dashboards/experts_panel.cpp" line="+14"/>
        <source>Expert load per step</source>
        <translation>每步专家负载</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>busiest expert / mean</source>
        <translation>最忙专家 / 平均</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Share of each layer&apos;s tokens</source>
        <translation>各层词元的分配比例</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>layer</source>
        <translation>层</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>dropped %</source>
        <translation>丢弃 %</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>expert</source>
        <translation>专家</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>No routing reported: the run&apos;s model has no experts, or no step has finished yet.</source>
        <translation>未报告路由：该运行的模型没有专家，或尚无完成的步。</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>%1 layers × %2 experts. Step %3: worst layer&apos;s busiest expert %4× the mean, %5% of choices dropped, load-balancing loss %6.</source>
        <translation>%1 层 × %2 个专家。第 %3 步：最差层中最忙专家为平均的 %4 倍，丢弃 %5% 的选择，负载均衡损失 %6。</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Launch a plan with experts (model › moe) to see each expert&apos;s share of the tokens and the load imbalance step by step.</source>
        <translation>启动带有专家的方案 (model › moe)，即可逐步查看每个专家分得的词元比例和负载不均衡情况。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>This run has no experts: its model is dense. A plan with model › moe shows the routing here.</source>
        <translation>此运行没有专家：其模型为稠密模型。带有 model › moe 的方案会在此显示路由。</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/experts_panel.h" line="+17"/>
        <source>Experts</source>
        <translation>专家</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::HealthPanel</name>
    <message>
        <location filename="../ui/dashboards/health_panel.h" line="+16"/>
        <source>Telemetry health</source>
        <translation>遥测健康状况</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/health_panel.cpp" line="+10"/>
        <source>ranks reporting</source>
        <translation>正在上报的 rank</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>messages received</source>
        <translation>已接收的消息</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>lost (given up by ranks)</source>
        <translation>丢失 (rank 已放弃)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>duplicates</source>
        <translation>重复</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>out of order (asked again)</source>
        <translation>乱序 (已重新请求)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>rejected frames</source>
        <translation>被拒绝的帧</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>dropped at the senders</source>
        <translation>在发送端丢弃</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>feed gaps (this window)</source>
        <translation>数据流缺口 (本窗口)</translation>
    </message>
    <message>
        <location line="+38"/>
        <source>Launch the plan to see the telemetry&apos;s health: messages received, lost, duplicated, out of order, rejected and dropped at the ranks.</source>
        <translation>启动方案即可查看遥测的健康状况：已接收、丢失、重复、乱序、被拒绝以及在 rank 端丢弃的消息。</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::HeatMapPanel</name>
    <message>
        <location filename="../ui/dashboards/heatmap_panel.cpp" line="+19"/>
        <source>rank</source>
        <translation>rank</translation>
    </message>
    <message>
        <location line="+65"/>
        <source>rank %1 %2%3%</source>
        <translation>rank %1 %2%3%</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 ranks, none stands out</source>
        <translation>%1 个 rank，无明显异常</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 ranks; furthest from the median: %2</source>
        <translation>%1 个 rank；偏离中位数最远：%2</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Launch the plan to see every rank&apos;s step time (or another metric) step by step, one row a rank: a slow or stalled rank stands out as a stripe.</source>
        <translation>启动方案即可逐步查看每个 rank 的单步时间 (或其他指标)，每个 rank 一行：缓慢或停滞的 rank 会显示为一条醒目的条纹。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Waiting for the ranks&apos; first steps.</source>
        <translation>等待各 rank 的最初几步。</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/heatmap_panel.h" line="+17"/>
        <source>Rank health</source>
        <translation>rank 健康状况</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::MemoryPanel</name>
    <message>
        <source>Memory per rank</source>
        <translation type="vanished">每 rank 内存</translation>
    </message>
    <message>
        <source>MiB</source>
        <translation type="vanished">MiB</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/memory_panel.cpp" line="+10"/>
        <source>MiB a rank</source>
        <translation>每 rank MiB</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>largest rank</source>
        <translation>最大 rank</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>median rank</source>
        <translation>中位 rank</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>predicted (busiest stage)</source>
        <translation>预测 (负载最重的阶段)</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Launch the plan to see each rank&apos;s memory by category (parameters, gradients, optimizer state, activations, buffers) beside the cost model&apos;s prediction.</source>
        <translation>启动方案即可查看每个 rank 按类别划分的内存 (参数、梯度、优化器状态、激活、缓冲区)，并与成本模型的预测并列对比。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>This run reports no memory yet.</source>
        <translation>此运行尚未上报内存。</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/memory_panel.h" line="+14"/>
        <source>Memory by category</source>
        <translation>按类别的内存</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::MetricPanel</name>
    <message>
        <location filename="../ui/dashboards/metric_panel.cpp" line="+22"/>
        <source>model FLOPs (MFU)</source>
        <translation>模型 FLOPs (MFU)</translation>
    </message>
    <message numerus="yes">
        <location line="+26"/>
        <source>loss scale (fp16): %n update(s) skipped for overflow</source>
        <translation>
            <numerusform>损失缩放 (fp16)：%n 次更新因溢出被跳过</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source>loss scale: none (only fp16 training scales its loss)</source>
        <translation>损失缩放：无（仅 fp16 训练缩放损失）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>dp MB a rank, so far</source>
        <translation>每个 rank 迄今的 dp MB</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>total (right axis)</source>
        <translation>总计 (右轴)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>job tokens/s</source>
        <translation>作业 tokens/s</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>every step would: %1 MB (%2× more)</source>
        <translation>每步同步则为：%1 MB（多 %2×）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>every step would: %1 MB</source>
        <translation>每步同步则为：%1 MB</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>no plan to count FLOPs from</source>
        <translation>没有可用于计算 FLOPs 的方案</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>achieved model TFLOP/s (job)</source>
        <translation>实际模型 TFLOP/s (作业)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>TFLOP/s</source>
        <translation>TFLOP/s</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>MFU % (right axis)</source>
        <translation>MFU % (右轴)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>MFU %</source>
        <translation>MFU %</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>MFU: no datasheet peak for this device (CPU)</source>
        <translation>MFU：该设备 (CPU) 没有数据手册峰值</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Launch the plan (Run › Launch) or open a run from the history to see %1 of every rank here.</source>
        <translation>启动方案 (运行 › 启动) 或从历史记录中打开一个运行，即可在此查看每个 rank 的%1。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>This run reports no %1.</source>
        <translation>此运行未上报%1。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Waiting for the first step: %1 appear as the ranks report.</source>
        <translation>等待第一步：各 rank 上报后即显示%1。</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::Panel</name>
    <message>
        <location filename="../ui/dashboards/panel.cpp" line="-190"/>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>grad norm</source>
        <translation>梯度范数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>learning rate</source>
        <translation>学习率</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tokens/s</source>
        <translation>tokens/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>step ms</source>
        <translation>单步 ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>compute ms</source>
        <translation>计算 ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>communication ms</source>
        <translation>通信 ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>exposed communication ms</source>
        <translation>未重叠通信 ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>bubble ms</source>
        <translation>气泡 ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>idle ms</source>
        <translation>空闲 ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>parameter bytes</source>
        <translation>参数字节数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>gradient bytes</source>
        <translation>梯度字节数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>optimizer bytes</source>
        <translation>优化器字节数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>activation bytes</source>
        <translation>激活字节数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>communication buffer bytes</source>
        <translation>通信缓冲区字节数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>peak RSS bytes</source>
        <translation>峰值 RSS 字节数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>master weight bytes</source>
        <translation>主权重字节</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>loss scale (fp16)</source>
        <translation>损失缩放 (fp16)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>dp MB all-reduced</source>
        <translation>all-reduce 的 dp MB</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>checkpoint ms (between steps)</source>
        <translation>检查点 ms (步与步之间)</translation>
    </message>
    <message numerus="yes">
        <location line="+11"/>
        <source>%n outer step(s); </source>
        <translation>
            <numerusform>%n 个外层步；</numerusform>
        </translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1× fewer</source>
        <translation>少 %1×</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>none sent yet</source>
        <translation>尚未发送</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1%2 MB all-reduced a rank instead of %3 MB every step would (%4)</source>
        <translation>每个 rank all-reduce %1%2 MB，而每步同步需 %3 MB（%4）</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::RanksPanel</name>
    <message>
        <location filename="../ui/dashboards/ranks_panel.cpp" line="+27"/>
        <source>Ranks</source>
        <translation>进程</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Hosts</source>
        <translation>主机</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Kernels</source>
        <translation>内核</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Threads</source>
        <translation>线程</translation>
    </message>
    <message numerus="yes">
        <location line="+17"/>
        <source>%1 (%n ranks)</source>
        <translation>
            <numerusform>%1（%n 个进程）</numerusform>
        </translation>
    </message>
    <message>
        <location line="+5"/>
        <source>fp32 kernels</source>
        <translation>fp32 内核</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Launch the plan to see its ranks here: which device, precision and kernels each runs (oneDNN&apos;s native bf16 GEMMs or fp32 ones on converted operands) and on how many threads.</source>
        <translation>启动该计划即可在此查看其各进程：每个进程使用的设备、精度和内核（oneDNN 原生 bf16 GEMM，或在转换后的操作数上运行的 fp32 GEMM）以及线程数。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>No rank has said hello yet.</source>
        <translation>尚无进程报到。</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/ranks_panel.h" line="+19"/>
        <source>Ranks and kernels</source>
        <translation>进程与内核</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::StallsPanel</name>
    <message>
        <location filename="../ui/dashboards/stalls_panel.cpp" line="+11"/>
        <source>stall s</source>
        <translation>停顿 s</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>rank %1: %2</source>
        <translation>rank %1：%2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>No stalls: no rank has held the others up.</source>
        <translation>无停顿：没有 rank 拖住其他 rank。</translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>%n stall(s), %1 s in all, the longest %2 s; held by %3</source>
        <translation>
            <numerusform>%n 次停顿，共 %1 s，最长 %2 s；由 %3 造成</numerusform>
        </translation>
    </message>
    <message>
        <location line="+45"/>
        <source>Launch the plan to see its stalls here: each time a rank held the others up (stopped, silent or slow in a collective), when, for how long and how it ended.</source>
        <translation>启动方案后在此查看其停顿：每次某个 rank 拖住其他 rank（停止、静默或在集合通信中变慢）的时间、持续多久以及如何结束。</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/stalls_panel.h" line="+19"/>
        <source>Stalls</source>
        <translation>停顿</translation>
    </message>
</context>
<context>
    <name>trellis::ui::dashboards::TimelinePanel</name>
    <message>
        <location filename="../ui/dashboards/timeline_panel.cpp" line="+21"/>
        <source>&lt;span style=&apos;color:#1f77b4&apos;&gt;■&lt;/span&gt; forward &amp;nbsp; &lt;span style=&apos;color:#2ca02c&apos;&gt;■&lt;/span&gt; backward &amp;nbsp; &lt;span style=&apos;color:#9467bd&apos;&gt;■&lt;/span&gt; weight gradients &amp;nbsp; &lt;span style=&apos;color:#b0b0b0&apos;&gt;▬&lt;/span&gt; send / receive (waiting for a peer) &amp;nbsp; &lt;span style=&apos;color:#d04040&apos;&gt;▨&lt;/span&gt; idle (bubble) &amp;nbsp; numbers: micro-batches; each section is scaled to its own length; the wheel zooms, dragging pans</source>
        <translation>&lt;span style=&apos;color:#1f77b4&apos;&gt;■&lt;/span&gt; 前向 &amp;nbsp; &lt;span style=&apos;color:#2ca02c&apos;&gt;■&lt;/span&gt; 反向 &amp;nbsp; &lt;span style=&apos;color:#9467bd&apos;&gt;■&lt;/span&gt; 权重梯度 &amp;nbsp; &lt;span style=&apos;color:#b0b0b0&apos;&gt;▬&lt;/span&gt; 发送 / 接收 (等待对端) &amp;nbsp; &lt;span style=&apos;color:#d04040&apos;&gt;▨&lt;/span&gt; 空闲 (气泡) &amp;nbsp; 数字：微批次编号；每个部分按各自的时长缩放；滚轮缩放，拖动平移</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>measured bubble %1% (step %2, %3 ms)</source>
        <translation>实测气泡 %1% (第 %2 步，%3 ms)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>predicted bubble %1% (%2 ms)</source>
        <translation>预测气泡 %1% (%2 ms)</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Launch the plan to see one traced step on every pipeline stage: forward, backward and communication as they ran, beside the schedule the planner predicted, and the bubble.</source>
        <translation>启动方案即可查看每个流水线阶段上一个被追踪的单步：实际执行的前向、反向和通信，与规划器预测的调度并列，以及气泡。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>This run has no pipeline (pp 1): its traced steps appear here once the trainer writes one (telemetry › trace_every).</source>
        <translation>此运行没有流水线 (pp 1)：训练程序写入追踪后，被追踪的单步会显示在此 (telemetry › trace_every)。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No traced step yet: the trainer traces one every few steps (telemetry › trace_every).</source>
        <translation>尚无被追踪的单步：训练程序每隔几步追踪一步 (telemetry › trace_every)。</translation>
    </message>
    <message>
        <location filename="../ui/dashboards/timeline_panel.h" line="+24"/>
        <source>Step timeline</source>
        <translation>单步时间线</translation>
    </message>
</context>
<context>
    <name>trellis::ui::estimate::PlanComparison</name>
    <message>
        <location filename="../ui/estimate/plan_comparison.cpp" line="+20"/>
        <location line="+58"/>
        <source>Pin this plan</source>
        <translation>固定此方案</translation>
    </message>
    <message>
        <location line="-57"/>
        <source>Use pinned plan</source>
        <translation>使用已固定的方案</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>What</source>
        <translation>项目</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Pinned</source>
        <translation>已固定</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Now</source>
        <translation>当前</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Change</source>
        <translation>变化</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Keep the plan as it is now (with its estimate) to compare your edits against</source>
        <translation>保留方案的当前状态 (连同其估算)，以便与之后的编辑进行比较</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Put the pinned plan back in the editor (one undo step)</source>
        <translation>将已固定的方案放回编辑器 (只算一个撤销步骤)</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>Unpin</source>
        <translation>取消固定</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&lt;i&gt;Pin the plan to compare it with your edits: the fields that differ and the predicted memory, step time, tokens/s, MFU and cost of both.&lt;/i&gt;</source>
        <translation>&lt;i&gt;固定方案后即可与之后的编辑进行比较：列出不同的字段，以及两者预测的内存、单步时间、tokens/s、MFU 和成本。&lt;/i&gt;</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&lt;b&gt;%1&lt;/b&gt; pinned</source>
        <translation>已固定 &lt;b&gt;%1&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> · &lt;i&gt;the plan now has errors: no estimate&lt;/i&gt;</source>
        <translation> · &lt;i&gt;方案当前有错误：无估算&lt;/i&gt;</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> · &lt;i&gt;estimating the plan now…&lt;/i&gt;</source>
        <translation> · &lt;i&gt;正在估算当前方案…&lt;/i&gt;</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Plan fields that differ</source>
        <translation>不同的方案字段</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>(none: the plan is the pinned one)</source>
        <translation>(无：当前方案即已固定的方案)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Plan fields that differ (%1)</source>
        <translation>不同的方案字段 (%1)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Predicted</source>
        <translation>预测</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>tokens/s</source>
        <translation>tokens/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>step time</source>
        <translation>单步时间</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>  compute</source>
        <translation>  计算</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>  exposed communication</source>
        <translation>  未重叠通信</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>  pipeline bubble</source>
        <translation>  流水线气泡</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>n/a (CPU)</source>
        <translation>不适用 (CPU)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MFU</source>
        <translation>MFU</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>cost a run</source>
        <translation>每次运行成本</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>peak memory a rank (GB)</source>
        <translation>每 rank 峰值内存 (GB)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Memory per pipeline stage (GB)</source>
        <translation>每个流水线阶段的内存 (GB)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>stage %1</source>
        <translation>阶段 %1</translation>
    </message>
</context>
<context>
    <name>trellis::ui::plan_editor::MeshCanvas</name>
    <message>
        <location filename="../ui/plan/mesh_canvas.cpp" line="+124"/>
        <source>keep the world size</source>
        <translation>保持 world size 不变</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Data-parallel degree: replicas of the model</source>
        <translation>数据并行度：模型副本数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tensor-parallel degree: the arrows offer the divisors of the attention heads</source>
        <translation>张量并行度：箭头按注意力头数的约数步进</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pipeline stages: the arrows offer up to the model&apos;s layers</source>
        <translation>流水线阶段数：箭头最多可调到模型的层数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Context-parallel degree: the sequence split across ranks</source>
        <translation>上下文并行度：序列在各 rank 间切分</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Expert-parallel degree: divides dp and the experts</source>
        <translation>专家并行度：需整除 dp 和专家数</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Changing tp, pp or cp sets dp so that the ranks fill the same devices</source>
        <translation>修改 tp、pp 或 cp 时会相应调整 dp，使各 rank 仍占满相同的设备</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Colour by</source>
        <translation>着色依据</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Zoom out (Ctrl+wheel): node tiles when zoomed far out</source>
        <translation>缩小 (Ctrl+滚轮)：缩得很小时显示节点方块</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Zoom in (Ctrl+wheel)</source>
        <translation>放大 (Ctrl+滚轮)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fit</source>
        <translation>适应</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fit the whole cluster into the view</source>
        <translation>将整个集群缩放到视图中</translation>
    </message>
    <message>
        <location line="+59"/>
        <source>Set %1 to %2 (dp %3)</source>
        <translation>将 %1 设为 %2 (dp %3)</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>&lt;i&gt;Click a rank to see its coordinates and its groups.&lt;/i&gt;</source>
        <translation>&lt;i&gt;点击某个 rank 查看其坐标和所属的组。&lt;/i&gt;</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>fit</source>
        <translation>适应</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>nodes</source>
        <translation>节点</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 px</source>
        <translation>%1 px</translation>
    </message>
</context>
<context>
    <name>trellis::ui::plan_editor::PlanEditor</name>
    <message>
        <location filename="../ui/plan/plan_editor.cpp" line="+173"/>
        <source>Not used: trellis-trainer trains this plan.</source>
        <translation>未使用：此计划由 trellis-trainer 训练。</translation>
    </message>
    <message>
        <location line="+77"/>
        <source>(custom)</source>
        <translation>(自定义)</translation>
    </message>
    <message>
        <location line="+29"/>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Slots</source>
        <translation>槽位</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>GPU model</source>
        <translation>GPU 型号</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Add nodes</source>
        <translation>添加节点</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copies of the last node, as many as the count beside: one undo step</source>
        <translation>复制最后一个节点，数量为旁边的计数：只算一个撤销步骤</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Remove node</source>
        <translation>移除节点</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Select a node to remove (the last node stays)</source>
        <translation>请选择要移除的节点 (最后一个节点会保留)</translation>
    </message>
    <message>
        <location line="-206"/>
        <source>&lt;b&gt;Problems&lt;/b&gt;</source>
        <translation>&lt;b&gt;问题&lt;/b&gt;</translation>
    </message>
    <message>
        <source>%1 — not used: trellis-trainer trains this plan</source>
        <translation type="vanished">%1 — 未使用：此计划由 trellis-trainer 训练</translation>
    </message>
    <message numerus="yes">
        <location line="+228"/>
        <source>Set the cluster to this machine (%n core(s))</source>
        <translation>
            <numerusform>将集群设为本机（%n 个核心）</numerusform>
        </translation>
    </message>
    <message>
        <location line="+116"/>
        <source>&lt;b&gt;%1&lt;/b&gt; — %2 ranks (dp %3 · tp %4 · pp %5 · cp %6) on &lt;span style=&apos;color:%7&apos;&gt;%8 slots&lt;/span&gt; of %9 node(s) · global batch %10 sequences × %11 tokens</source>
        <translation>&lt;b&gt;%1&lt;/b&gt; — %2 个 rank (dp %3 · tp %4 · pp %5 · cp %6)，使用 %9 个节点上的 &lt;span style=&apos;color:%7&apos;&gt;%8 个槽位&lt;/span&gt; · 全局批次 %10 条序列 × %11 个 token</translation>
    </message>
    <message>
        <location line="+5"/>
        <source> · experts over ep %1 (inside dp)</source>
        <translation> · 专家分布于 ep %1 (在 dp 内)</translation>
    </message>
    <message>
        <location line="-12"/>
        <source>&lt;b&gt;%1&lt;/b&gt; — runs its own trainer on %2 ranks (&lt;span style=&apos;color:%3&apos;&gt;%4 slots&lt;/span&gt; of %5 node(s)): &lt;code&gt;%6&lt;/code&gt;%7</source>
        <translation>&lt;b&gt;%1&lt;/b&gt; — 在 %2 个 rank 上运行自带的训练程序（%5 个节点的 &lt;span style=&apos;color:%3&apos;&gt;%4 个槽位&lt;/span&gt;）：&lt;code&gt;%6&lt;/code&gt;%7</translation>
    </message>
    <message>
        <location line="+4"/>
        <source> · no model section: no estimate</source>
        <translation> · 无 model 部分：无估算</translation>
    </message>
    <message>
        <location line="+52"/>
        <source>node %1: </source>
        <translation>节点 %1: </translation>
    </message>
    <message>
        <location line="+10"/>
        <source>No problems: the plan is valid.</source>
        <translation>没有问题：方案有效。</translation>
    </message>
</context>
<context>
    <name>trellis::ui::workspace::DashboardGrid</name>
    <message>
        <location filename="../ui/workspace/dashboard_grid.cpp" line="+80"/>
        <source>Click to collapse or expand; drop a panel here to move it into this section</source>
        <translation>单击可折叠或展开；将面板拖放到此处可将其移入此分区</translation>
    </message>
    <message numerus="yes">
        <location line="+91"/>
        <source>%1 (%n panel(s))</source>
        <translation>
            <numerusform>%1 (%n 个面板)</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>trellis::ui::workspace::PanelFrame</name>
    <message>
        <location filename="../ui/workspace/panel_frame.cpp" line="+57"/>
        <source>Drag to move the panel; double-click to maximise it (Esc returns)</source>
        <translation>拖动可移动面板；双击可将其最大化 (按 Esc 返回)</translation>
    </message>
    <message>
        <location line="+5"/>
        <location line="+48"/>
        <source>Maximise (double-click the title; Esc returns)</source>
        <translation>最大化 (双击标题；按 Esc 返回)</translation>
    </message>
    <message>
        <location line="-43"/>
        <source>Copy or save the chart</source>
        <translation>复制或保存图表</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Copy image</source>
        <translation>复制图像</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save as PNG…</source>
        <translation>另存为 PNG…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save as SVG…</source>
        <translation>另存为 SVG…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Open in a window</source>
        <translation>在窗口中打开</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reset zoom of the step charts</source>
        <translation>重置按步图表的缩放</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>Back to the grid (Esc)</source>
        <translation>返回网格 (Esc)</translation>
    </message>
    <message>
        <location line="+26"/>
        <location line="+8"/>
        <location line="+3"/>
        <source>cannot write %1</source>
        <translation>无法写入 %1</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Save the chart</source>
        <translation>保存图表</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>SVG (*.svg)</source>
        <translation>SVG (*.svg)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>PNG (*.png)</source>
        <translation>PNG (*.png)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Not saved</source>
        <translation>未保存</translation>
    </message>
</context>
<context>
    <name>trellis::ui::workspace::StartPage</name>
    <message>
        <location filename="../ui/workspace/start_page.cpp" line="+51"/>
        <source>&lt;h1&gt;Trellis&lt;/h1&gt;&lt;p&gt;Plan a parallel training run, launch it, watch every rank.&lt;/p&gt;</source>
        <translation>&lt;h1&gt;Trellis&lt;/h1&gt;&lt;p&gt;规划并行训练运行，启动它，观察每一个 rank。&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Start</source>
        <translation>开始</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>New plan for this machine</source>
        <translation>为本机新建方案</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A small GPT with one data-parallel rank per CPU core of this machine, ready to launch</source>
        <translation>一个小型 GPT，本机每个 CPU 核心一个数据并行 rank，可直接启动</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open a plan…</source>
        <translation>打开方案…</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Examples</source>
        <translation>示例</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Recent plans</source>
        <translation>最近的方案</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Recent runs</source>
        <translation>最近的运行</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>A tiny GPT on this machine&apos;s CPU, 4 data-parallel ranks: the first run to try</source>
        <translation>在本机 CPU 上运行的微型 GPT，4 个数据并行 rank：首先尝试的运行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Two pipeline stages with the 1F1B schedule: watch the bubble in the step timeline</source>
        <translation>两个流水线阶段，采用 1F1B 调度：在单步时间线中观察气泡</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tensor parallelism over 2 ranks with sequence parallelism</source>
        <translation>跨 2 个 rank 的张量并行，并启用序列并行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Context parallelism: each sequence split over 2 ranks, zigzag layout</source>
        <translation>上下文并行：每条序列切分到 2 个 rank，zigzag 布局</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Mixture of experts: 4 experts over 2 expert-parallel ranks, top-2 routing</source>
        <translation>混合专家：4 个专家分布在 2 个专家并行 rank 上，top-2 路由</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A small llama (RMSNorm, SwiGLU, grouped-query attention) with tensor parallelism</source>
        <translation>一个小型 llama (RMSNorm、SwiGLU、分组查询注意力)，采用张量并行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Llama 2 70B on 16 DGX H100 nodes (128 GPUs): estimate and search, not run here</source>
        <translation>Llama 2 70B，16 个 DGX H100 节点 (128 个 GPU)：仅估算和搜索，不在此运行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The quick start on one CUDA GPU</source>
        <translation>在单个 CUDA GPU 上快速入门</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>A plan that does not load: %1</source>
        <translation>无法加载的方案：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 · %2 ranks</source>
        <translation>%1 · %2 个 rank</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>No plan opened yet: start from an example or a new plan.</source>
        <translation>尚未打开任何方案：从示例或新方案开始。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1 · %2 · %3 · %4 ranks · %5 of %6 steps%7</source>
        <translation>%1 · %2 · %3 · %4 个 rank · %5 / %6 步%7</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> · loss %1</source>
        <translation> · 损失 %1</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>No run in this history yet: launch a plan (Run › Launch, Ctrl+R).</source>
        <translation>此历史记录中尚无运行：启动一个方案 (运行 › 启动，Ctrl+R)。</translation>
    </message>
</context>
</TS>
